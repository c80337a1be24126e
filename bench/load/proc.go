package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// usage is a process's CPU time (clock ticks) and peak resident memory.
type usage struct {
	ticks  int64
	hwmKiB int64
}

// userHZ is the kernel's USER_HZ, the unit of /proc/<pid>/stat times: 100
// on every Linux architecture Go supports.
const userHZ = 100

// sample reads /proc for each process; a process that is gone, or pid 0
// (one the bench does not know), reads zero.
func sample(pids []int) []usage {
	out := make([]usage, len(pids))
	for i, pid := range pids {
		if pid > 0 {
			out[i] = readUsage(pid)
		}
	}
	return out
}

// pidOf is a started command's process id, 0 for none.
func pidOf(c *exec.Cmd) int {
	if c == nil || c.Process == nil {
		return 0
	}
	return c.Process.Pid
}

// treeTicks is the CPU time of pid and of all its descendants, those that
// exited included (a parent's cutime and cstime count the children it
// reaped): a database server forks a process per connection, and a
// launcher script runs the JVM as its child.
func treeTicks(pid int) int64 {
	kids := map[int][]int{}
	own := map[int]int64{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue // exited since the listing
		}
		ppid, ticks := statTree(string(b))
		kids[ppid] = append(kids[ppid], p)
		own[p] = ticks
	}
	var sum func(int) int64
	sum = func(p int) int64 {
		t := own[p]
		for _, k := range kids[p] {
			t += sum(k)
		}
		return t
	}
	return sum(pid)
}

func readUsage(pid int) usage {
	var u usage
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		u.ticks = statTicks(string(b))
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
				u.hwmKiB, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
	}
	return u
}

// statTree is the parent pid and utime + stime + cutime + cstime from a
// /proc/<pid>/stat line.
func statTree(stat string) (ppid int, ticks int64) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 15 { // f[1] is field 4 (ppid); cutime and cstime are fields 16 and 17
		return 0, 0
	}
	ppid, _ = strconv.Atoi(f[1])
	for _, v := range f[11:15] {
		t, _ := strconv.ParseInt(v, 10, 64)
		ticks += t
	}
	return ppid, ticks
}

// statTicks is utime + stime from a /proc/<pid>/stat line. The command
// name (field 2) may hold spaces, so fields count from its closing ")".
func statTicks(stat string) int64 {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 { // f[0] is field 3 (state); utime and stime are fields 14 and 15
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return ut + st
}
