package main

import (
	"strings"
	"testing"
)

// A stream as `go test -json` writes it (Go 1.26): a passing, a skipped and
// a failing test with a skipped subtest, a test that never finished, a
// build failure, a package without tests and a go command error.
const stream = `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestA"}
{"Action":"output","Package":"m/a","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"m/a","Test":"TestA","Output":"    a_test.go:3: hello\n"}
{"Action":"output","Package":"m/a","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"m/a","Test":"TestA","Elapsed":0}
{"Action":"run","Package":"m/a","Test":"TestS"}
{"Action":"output","Package":"m/a","Test":"TestS","Output":"=== RUN   TestS\n"}
{"Action":"output","Package":"m/a","Test":"TestS","Output":"    a_test.go:4: neo4j: opted out\n"}
{"Action":"output","Package":"m/a","Test":"TestS","Output":"        second line\n"}
{"Action":"output","Package":"m/a","Test":"TestS","Output":"--- SKIP: TestS (0.00s)\n"}
{"Action":"skip","Package":"m/a","Test":"TestS","Elapsed":0}
{"Action":"output","Package":"m/a","Output":"PASS\n"}
{"Action":"output","Package":"m/a","Output":"ok  \tm/a\t0.007s\n"}
{"Action":"pass","Package":"m/a","Elapsed":0.007}
{"Action":"run","Package":"m/b","Test":"TestF"}
{"Action":"output","Package":"m/b","Test":"TestF","Output":"=== RUN   TestF\n"}
{"Action":"run","Package":"m/b","Test":"TestF/sub"}
{"Action":"output","Package":"m/b","Test":"TestF/sub","Output":"    b_test.go:5: sub skip\n"}
{"Action":"output","Package":"m/b","Test":"TestF/sub","Output":"--- SKIP: TestF/sub (0.00s)\n"}
{"Action":"skip","Package":"m/b","Test":"TestF/sub","Elapsed":0}
{"Action":"output","Package":"m/b","Test":"TestF","Output":"    b_test.go:5: bad\n"}
{"Action":"output","Package":"m/b","Test":"TestF","Output":"--- FAIL: TestF (0.00s)\n"}
{"Action":"fail","Package":"m/b","Test":"TestF","Elapsed":0}
{"Action":"run","Package":"m/b","Test":"TestHang"}
{"Action":"output","Package":"m/b","Test":"TestHang","Output":"panic: test timed out after 1s\n"}
{"Action":"output","Package":"m/b","Output":"FAIL\tm/b\t1.0s\n"}
{"Action":"fail","Package":"m/b","Elapsed":1}
{"ImportPath":"m/c [m/c.test]","Action":"build-output","Output":"c/c.go:1:23: undefined: y\n"}
{"ImportPath":"m/c [m/c.test]","Action":"build-fail"}
{"Action":"output","Package":"m/c","Output":"FAIL\tm/c [build failed]\n"}
{"Action":"fail","Package":"m/c","Elapsed":0,"FailedBuild":"m/c [m/c.test]"}
{"Action":"output","Package":"m/d","Output":"?   \tm/d\t[no test files]\n"}
{"Action":"skip","Package":"m/d","Elapsed":0}
go: warning: something
`

func TestFilter(t *testing.T) {
	var b strings.Builder
	f := newFilter(&b, "m/")
	if err := f.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	f.report()
	want := "ok  \tm/a\t0.007s\n" +
		"    b_test.go:5: bad\n--- FAIL: TestF (0.00s)\n" +
		"--- FAIL: TestHang (did not finish)\npanic: test timed out after 1s\n" +
		"FAIL\tm/b\t1.0s\n" +
		"c/c.go:1:23: undefined: y\nFAIL\tm/c [build failed]\n" +
		"?   \tm/d\t[no test files]\n" +
		"go: warning: something\n" +
		"\nskipped: 2\n" +
		"  a TestS: a_test.go:4: neo4j: opted out second line\n" +
		"  b TestF/sub: b_test.go:5: sub skip\n" +
		"failed: 3\n  b TestF\n  b TestHang (did not finish)\n  c (build failed)\n" +
		"1 passed, 3 failed\n"
	if got := b.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}
