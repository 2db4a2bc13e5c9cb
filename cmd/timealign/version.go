package main

import (
	"fmt"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func runVersion(e *env, args []string) error {
	fs := newFlags(e, "version", "", "Prints timealign's version, the Go version and the VCS revision it was built from.")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	rev := ""
	goVer := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVer = bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	fmt.Fprintf(e.stdout, "timealign %s", version)
	if rev != "" {
		fmt.Fprintf(e.stdout, " (%.12s)", rev)
	}
	fmt.Fprintf(e.stdout, " %s\n", goVer)
	return nil
}
