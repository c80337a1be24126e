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

// sample reads /proc for each process; a process that is gone reads zero.
func sample(cmds []*exec.Cmd) []usage {
	out := make([]usage, len(cmds))
	for i, c := range cmds {
		if c == nil || c.Process == nil {
			continue
		}
		out[i] = readUsage(c.Process.Pid)
	}
	return out
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
