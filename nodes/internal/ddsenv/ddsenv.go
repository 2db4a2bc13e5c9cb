// Package ddsenv checks, before rcl starts, the environment variables that
// choose and configure the middleware, so that a node started with a
// mistake in them stops at once with an error naming the variable instead
// of hanging, failing deep inside rcl, or running on the wrong network and
// hearing nothing:
//
//   - RMW_IMPLEMENTATION names an RMW that this ROS 2 does not have (the
//     installed ones register in the ament index, resource type
//     rmw_typesupport);
//   - FASTRTPS_DEFAULT_PROFILES_FILE or FASTDDS_DEFAULT_PROFILES_FILE, or a
//     file:// of CYCLONEDDS_URI, names a file that does not exist (Fast DDS
//     logs an XML error and goes on with its defaults: every interface,
//     shared memory);
//   - the discovery variables do not fit the distribution. Humble (rcl 5)
//     reads ROS_LOCALHOST_ONLY only; Jazzy (rcl 9) reads
//     ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS, and still honours
//     a deprecated ROS_LOCALHOST_ONLY=1, which then overrides both. So on
//     Humble a range or static peers are ignored, and on Jazzy
//     ROS_LOCALHOST_ONLY=1 beside another range or static peers silently
//     discards them; an unknown range is taken as LOCALHOST by Jazzy's rcl
//     with only a warning.
//
// ROS_LOCALHOST_ONLY=1 together with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
// (one setting for both distributions) is accepted: Jazzy's rcl warns that
// the first is deprecated and both mean the same.
//
// The package reads no environment itself: Check takes the lookup
// functions, so it is tested without ROS.
package ddsenv

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// ErrEnv is what every error of Check unwraps to.
var ErrEnv = errors.New("ROS 2 environment")

// Env is what Check reads.
type Env struct {
	// Getenv returns an environment variable ("" if unset).
	Getenv func(string) string
	// FS reads files by absolute path (the profile files, the ament
	// index): os.DirFS("/") in a node.
	FS fs.FS
	// DiscoveryRange tells whether the rcl the node runs on reads
	// ROS_AUTOMATIC_DISCOVERY_RANGE (Jazzy and later) or only
	// ROS_LOCALHOST_ONLY (Humble).
	DiscoveryRange bool
}

// Check returns an error naming the first variable that is wrong, or nil.
func Check(e Env) error {
	if err := checkDistro(e); err != nil {
		return err
	}
	if err := checkRMW(e); err != nil {
		return err
	}
	if err := checkFiles(e); err != nil {
		return err
	}
	return checkDiscovery(e)
}

func envErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrEnv}, a...)...)
}

// InstalledRMWs lists the RMW implementations of the ament index of
// AMENT_PREFIX_PATH, sorted (rmw_implementation, the loader that registers
// there too, is not one).
func InstalledRMWs(e Env) []string {
	var out []string
	for _, prefix := range filepath.SplitList(e.Getenv("AMENT_PREFIX_PATH")) {
		if prefix == "" {
			continue
		}
		dir := strings.TrimPrefix(filepath.Join(prefix, "share/ament_index/resource_index/rmw_typesupport"), "/")
		entries, err := fs.ReadDir(e.FS, dir)
		if err != nil {
			continue
		}
		for _, ent := range entries {
			if ent.Name() != "rmw_implementation" && !slices.Contains(out, ent.Name()) {
				out = append(out, ent.Name())
			}
		}
	}
	slices.Sort(out)
	return out
}

func checkRMW(e Env) error {
	rmw := e.Getenv("RMW_IMPLEMENTATION")
	if rmw == "" || e.Getenv("AMENT_PREFIX_PATH") == "" {
		return nil // rmw_implementation's default; without an index there is nothing to compare with
	}
	have := InstalledRMWs(e)
	if slices.Contains(have, rmw) {
		return nil
	}
	if len(have) == 0 {
		return envErr("RMW_IMPLEMENTATION=%s: no RMW implementation is registered under AMENT_PREFIX_PATH (is ROS 2 sourced?)", rmw)
	}
	return envErr("RMW_IMPLEMENTATION=%s is not installed in this ROS 2 (installed: %s)", rmw, strings.Join(have, ", "))
}

// fastDDS and cyclone tell whether the RMW the environment selects may be
// Fast DDS or Cyclone DDS (unset: the distribution's default, either).
func fastDDS(rmw string) bool { return rmw == "" || strings.HasPrefix(rmw, "rmw_fastrtps") }
func cyclone(rmw string) bool { return rmw == "" || rmw == "rmw_cyclonedds_cpp" }

func exists(e Env, path string) bool {
	if !filepath.IsAbs(path) {
		return true // relative to the node's working directory: left to the RMW
	}
	_, err := fs.Stat(e.FS, strings.TrimPrefix(filepath.Clean(path), "/"))
	return err == nil
}

func checkFiles(e Env) error {
	rmw := e.Getenv("RMW_IMPLEMENTATION")
	if fastDDS(rmw) {
		// Fast DDS 2.x (Humble 2.6, Jazzy 2.14) reads the first name only;
		// Fast DDS 3 (Kilted on) the second.
		for _, v := range []string{"FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE"} {
			if p := e.Getenv(v); p != "" && !exists(e, p) {
				return envErr("%s=%s: no such file (Fast DDS would go on without it, with its defaults: every network interface and shared memory)", v, p)
			}
		}
	}
	if cyclone(rmw) {
		// CYCLONEDDS_URI: XML inline, or file:// URIs, separated by commas.
		for _, part := range strings.Split(e.Getenv("CYCLONEDDS_URI"), ",") {
			part = strings.TrimSpace(part)
			if p, ok := strings.CutPrefix(part, "file://"); ok && !exists(e, p) {
				return envErr("CYCLONEDDS_URI names %s: no such file", part)
			}
		}
	}
	return nil
}

func checkDiscovery(e Env) error {
	only := e.Getenv("ROS_LOCALHOST_ONLY")
	rng := e.Getenv("ROS_AUTOMATIC_DISCOVERY_RANGE")
	peers := e.Getenv("ROS_STATIC_PEERS")
	if !e.DiscoveryRange {
		// Humble: the range and the static peers do not exist yet.
		switch {
		case rng != "" && rng != "SUBNET" && rng != "SYSTEM_DEFAULT" && only != "1":
			return envErr("ROS_AUTOMATIC_DISCOVERY_RANGE=%s: this ROS 2 (Humble's rcl) does not read it and would discover on every interface; set ROS_LOCALHOST_ONLY=1 for LOCALHOST", rng)
		case peers != "":
			return envErr("ROS_STATIC_PEERS=%s: this ROS 2 (Humble's rcl) does not read it, and these peers would never be contacted; configure them in the RMW's own profile", peers)
		}
		return nil
	}
	switch rng {
	case "", "OFF", "LOCALHOST", "SUBNET", "SYSTEM_DEFAULT":
	default:
		return envErr("ROS_AUTOMATIC_DISCOVERY_RANGE=%s: want OFF, LOCALHOST, SUBNET or SYSTEM_DEFAULT (rcl would take it as LOCALHOST)", rng)
	}
	if only == "1" {
		switch {
		case rng != "" && rng != "LOCALHOST":
			return envErr("ROS_LOCALHOST_ONLY=1 overrides ROS_AUTOMATIC_DISCOVERY_RANGE=%s (Jazzy's rcl honours the deprecated ROS_LOCALHOST_ONLY first): unset ROS_LOCALHOST_ONLY", rng)
		case peers != "":
			return envErr("ROS_LOCALHOST_ONLY=1 discards ROS_STATIC_PEERS=%s (Jazzy's rcl honours the deprecated ROS_LOCALHOST_ONLY first): unset ROS_LOCALHOST_ONLY and set ROS_AUTOMATIC_DISCOVERY_RANGE", peers)
		}
	}
	return nil
}

// checkDistro: the node was built against one distribution's rcl (Humble's,
// without ROS_AUTOMATIC_DISCOVERY_RANGE, or a later one's: Iron, Jazzy, …)
// and ROS_DISTRO names the sourced one. The C structs of rcl and of the
// type supports differ between them (Jazzy added type hashes and
// descriptions), so a node built for Humble and run with Jazzy sourced
// crashes inside rcl (SIGSEGV, seen), and the reverse misreads them. ROS
// 2 names its distributions in alphabetical order; an unset ROS_DISTRO is
// not judged.
func checkDistro(e Env) error {
	d := e.Getenv("ROS_DISTRO")
	if d == "" {
		return nil
	}
	if e.DiscoveryRange == (d > "humble") {
		return nil
	}
	built := "Humble"
	if e.DiscoveryRange {
		built = "Iron or later (Jazzy)"
	}
	return envErr("ROS_DISTRO=%s, but this node was built against %s's rcl: build the package again (colcon build) with this distribution sourced, or source the one it was built for", d, built)
}
