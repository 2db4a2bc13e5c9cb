package ddsenv

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestCheck(t *testing.T) {
	fsys := fstest.MapFS{
		"opt/ros/jazzy/share/ament_index/resource_index/rmw_typesupport/rmw_cyclonedds_cpp": {},
		"opt/ros/jazzy/share/ament_index/resource_index/rmw_typesupport/rmw_fastrtps_cpp":   {},
		"opt/ros/jazzy/share/ament_index/resource_index/rmw_typesupport/rmw_implementation": {},
		"tmp/loopback.xml": {},
		"tmp/cyclone.xml":  {},
	}
	base := map[string]string{"AMENT_PREFIX_PATH": "/ws/install/timealign:/opt/ros/jazzy"}
	cases := []struct {
		name  string
		env   map[string]string
		jazzy bool
		err   string // substring of the error; "" for none
	}{
		{name: "nothing set", jazzy: true},
		{name: "installed RMW", env: map[string]string{"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}, jazzy: true},
		{name: "RMW not installed", env: map[string]string{"RMW_IMPLEMENTATION": "rmw_connextdds"},
			err: "RMW_IMPLEMENTATION=rmw_connextdds is not installed in this ROS 2 (installed: rmw_cyclonedds_cpp, rmw_fastrtps_cpp)"},
		{name: "the loader is no RMW", env: map[string]string{"RMW_IMPLEMENTATION": "rmw_implementation"}, err: "is not installed"},
		{name: "RMW without ROS sourced", env: map[string]string{"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp", "AMENT_PREFIX_PATH": "/nowhere"},
			err: "no RMW implementation is registered"},
		{name: "profile present", env: map[string]string{"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp", "FASTRTPS_DEFAULT_PROFILES_FILE": "/tmp/loopback.xml"}},
		{name: "profile missing", env: map[string]string{"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp", "FASTRTPS_DEFAULT_PROFILES_FILE": "/tmp/nope.xml"},
			err: "FASTRTPS_DEFAULT_PROFILES_FILE=/tmp/nope.xml: no such file"},
		{name: "profile missing, default RMW", env: map[string]string{"FASTDDS_DEFAULT_PROFILES_FILE": "/tmp/nope.xml"},
			err: "FASTDDS_DEFAULT_PROFILES_FILE=/tmp/nope.xml: no such file"},
		{name: "Fast DDS profile missing under Cyclone", env: map[string]string{"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp", "FASTRTPS_DEFAULT_PROFILES_FILE": "/tmp/nope.xml"}},
		{name: "Cyclone file missing", env: map[string]string{"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp", "CYCLONEDDS_URI": "file:///tmp/cyclone.xml,file:///tmp/gone.xml"},
			err: "CYCLONEDDS_URI names file:///tmp/gone.xml: no such file"},
		{name: "Cyclone inline XML", env: map[string]string{"CYCLONEDDS_URI": "<General><AllowMulticast>false</AllowMulticast></General>"}},
		{name: "built for Humble, Humble sourced", env: map[string]string{"ROS_DISTRO": "humble"}},
		{name: "built for Jazzy, Jazzy sourced", env: map[string]string{"ROS_DISTRO": "jazzy"}, jazzy: true},
		{name: "built for Jazzy, Rolling sourced", env: map[string]string{"ROS_DISTRO": "rolling"}, jazzy: true},
		{name: "built for Humble, Jazzy sourced", env: map[string]string{"ROS_DISTRO": "jazzy"},
			err: "ROS_DISTRO=jazzy, but this node was built against Humble's rcl: build the package again (colcon build)"},
		{name: "built for Jazzy, Humble sourced", env: map[string]string{"ROS_DISTRO": "humble"}, jazzy: true,
			err: "ROS_DISTRO=humble, but this node was built against Iron or later (Jazzy)'s rcl"},
		{name: "built for Jazzy, Galactic sourced", env: map[string]string{"ROS_DISTRO": "galactic"}, jazzy: true, err: "ROS_DISTRO=galactic"},
		{name: "Humble localhost only", env: map[string]string{"ROS_LOCALHOST_ONLY": "1"}},
		{name: "Humble, both set", env: map[string]string{"ROS_LOCALHOST_ONLY": "1", "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}},
		{name: "Humble, range alone", env: map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"},
			err: "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST: this ROS 2 (Humble's rcl) does not read it"},
		{name: "Humble, subnet range", env: map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}},
		{name: "Humble, static peers", env: map[string]string{"ROS_STATIC_PEERS": "192.0.2.7"}, err: "ROS_STATIC_PEERS=192.0.2.7: this ROS 2 (Humble's rcl) does not read it"},
		{name: "Jazzy range", env: map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}, jazzy: true},
		{name: "Jazzy, both localhost", env: map[string]string{"ROS_LOCALHOST_ONLY": "1", "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}, jazzy: true},
		{name: "Jazzy, localhost only alone", env: map[string]string{"ROS_LOCALHOST_ONLY": "1"}, jazzy: true},
		{name: "Jazzy, localhost only against subnet", env: map[string]string{"ROS_LOCALHOST_ONLY": "1", "ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}, jazzy: true,
			err: "ROS_LOCALHOST_ONLY=1 overrides ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET"},
		{name: "Jazzy, localhost only against static peers", env: map[string]string{"ROS_LOCALHOST_ONLY": "1", "ROS_STATIC_PEERS": "192.0.2.7"}, jazzy: true,
			err: "ROS_LOCALHOST_ONLY=1 discards ROS_STATIC_PEERS=192.0.2.7"},
		{name: "Jazzy, localhost only 0", env: map[string]string{"ROS_LOCALHOST_ONLY": "0", "ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}, jazzy: true},
		{name: "Jazzy, bad range", env: map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "localhost"}, jazzy: true,
			err: "ROS_AUTOMATIC_DISCOVERY_RANGE=localhost: want OFF, LOCALHOST, SUBNET or SYSTEM_DEFAULT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range c.env {
				env[k] = v
			}
			err := Check(Env{Getenv: func(k string) string { return env[k] }, FS: fsys, DiscoveryRange: c.jazzy})
			if c.err == "" {
				if err != nil {
					t.Fatalf("Check: %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Check: %v, want an error with %q", err, c.err)
			}
			if !errors.Is(err, ErrEnv) {
				t.Errorf("Check: %v does not unwrap to ErrEnv", err)
			}
		})
	}
}
