// The Go anchor of benchmarks/parse_bench.py: the same URN texts parsed with
// github.com/leodido/go-urn, the Go URN parser Debian packages (golang-github-leodido-go-urn-dev;
// its version 1.2 implements RFC 2141's grammar, which has no r-, q- or f-components).
//
// It reads the texts, one a line, from the file given, then waits for commands on standard
// input, so that the benchmark can alternate it round by round with the Python libraries:
//
//	run      parse every text once; answer "<CPU nanoseconds> <texts accepted>"
//	verdicts answer one character a text, 1 where Parse accepted it, else 0
//
// The CPU time is the whole process's (getrusage), the garbage collector's included.
//
//	GO111MODULE=off GOPATH=<the directory holding src/github.com/leodido/go-urn> go build -o go_urn_parse . && ./go_urn_parse FILE
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"log"
	"os"
	"syscall"

	urn "github.com/leodido/go-urn"
)

func cpuNanoseconds() int64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		log.Fatal(err)
	}
	return usage.Utime.Nano() + usage.Stime.Nano()
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: go_urn_parse FILE")
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	texts := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	out := bufio.NewWriter(os.Stdout)
	commands := bufio.NewScanner(os.Stdin)
	for commands.Scan() {
		switch commands.Text() {
		case "run":
			accepted := 0
			start := cpuNanoseconds()
			for _, text := range texts {
				if _, ok := urn.Parse(text); ok {
					accepted++
				}
			}
			fmt.Fprintf(out, "%d %d\n", cpuNanoseconds()-start, accepted)
		case "verdicts":
			for _, text := range texts {
				if _, ok := urn.Parse(text); ok {
					out.WriteByte('1')
				} else {
					out.WriteByte('0')
				}
			}
			out.WriteByte('\n')
		default:
			log.Fatalf("unknown command %q", commands.Text())
		}
		out.Flush()
	}
}
