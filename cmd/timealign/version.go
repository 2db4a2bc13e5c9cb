package main

import (
	"fmt"
	"runtime/debug"

	"github.com/timealign/timealign/cmd/timealign/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func versionCommand() *cli.Command {
	return &cli.Command{Name: "version", Short: "print the version", Run: runVersion}
}

// runVersion prints e.Version (main's version in the binary).
func runVersion(e *cli.Env, args []string) error {
	fs := cli.NewFlags(e, "version", "", "Prints timealign's version, the Go version and the VCS revision it was built from.")
	if err := cli.ParseFlags(e, fs, args); err != nil {
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
	fmt.Fprintf(e.Stdout, "timealign %s", e.Version)
	if rev != "" {
		fmt.Fprintf(e.Stdout, " (%.12s)", rev)
	}
	fmt.Fprintf(e.Stdout, " %s\n", goVer)
	return nil
}
