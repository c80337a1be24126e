package activities

import "testing"

func TestSwapped(t *testing.T) {
	journal := `Under systemd , both kernel and system messages are logged by the journal service systemd-journald.service (a.k.a journald ) either into a persistent binary data below " /var/log/journal " or into a volatile binary data below " /run/log/journal/ ".`
	iconv := `ISO-8859-1 old standard for western European languages, ASCII + accented characters ISO-8859-2 old standard for eastern European languages, ASCII + accented characters`
	shell := `The default non-interactive POSIX shell " /bin/sh " is a symlink pointing to /usr/bin/dash and used by many system programs. The default interactive POSIX shell is /usr/bin/bash .`
	topics := `I have updated "Debian Reference (version 2)" to address new topics (Systemd, Wayland, IMAP, PipeWire, Linux kernel 5.10) and removed outdated topics (SysV init, CVS, Subversion, SSH protocol 1, Linux kernels before 2.5).`
	cases := []struct {
		name, claim, window string
		want                bool
	}{
		{"paths swapped", `Under systemd, journald keeps persistent binary log data below "/run/log/journal/" and volatile data below "/var/log/journal".`, journal, true},
		{"paths as written", `Under systemd, journald keeps persistent binary log data below "/var/log/journal" and volatile data below "/run/log/journal/".`, journal, false},
		{"table rows swapped", `ISO-8859-1 is the old standard for eastern European languages, and ISO-8859-2 is the old standard for western European languages.`, iconv, true},
		{"table rows as written", `ISO-8859-1 is the old standard for western European languages, and ISO-8859-2 is the old standard for eastern European languages.`, iconv, false},
		{"roles swapped", `The default interactive POSIX shell is /usr/bin/dash, while "/bin/sh" is a symlink pointing to /usr/bin/bash.`, shell, true},
		{"roles as written", `The default interactive POSIX shell is /usr/bin/bash, while "/bin/sh" is a symlink pointing to /usr/bin/dash.`, shell, false},
		// A list whose verb stands once for all its items: "removed" is
		// in SysV's clause in the source and in SSH protocol 1's in the
		// claim; a bare number is no name here (numbersLocal's).
		{"a list's shared verb", `Debian Reference version 2 was updated to address new topics such as Systemd, Wayland, IMAP, PipeWire and Linux kernel 5.10, and outdated topics like SysV init, CVS and SSH protocol 1 were removed.`, topics, false},
		{"one name", `The journal keeps volatile data below /var/log/journal.`, journal, false},
		{"a name the window writes apart", `The persistent data is below /run/log/journal/ and the volatile data below "/var/log/journal".`,
			`The persistent data is below / var / log / journal and the volatile data below /run/log/journal/.`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := swapped(c.claim, c.window); got != c.want {
				t.Errorf("swapped = %v, want %v", got, c.want)
			}
		})
	}
}
