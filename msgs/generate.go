// Package msgs holds the Go bindings of the ROS 2 interfaces the nodes use
// as typed messages (rcl_interfaces, for the parameter services), generated
// by rclgo-gen (a tool of this module) with ROS 2 Humble sourced:
//
//	go generate ./msgs
//
// The generate step removes the include and library paths of the machine
// it ran on (cgo takes them from the sourced environment at build time:
// CMakeLists.txt and .ci/ros2 set CGO_CFLAGS and CGO_LDFLAGS) and adds the
// ros2 build constraint, so the module builds without ROS 2.
package msgs

//go:generate sh -c "rm -rf builtin_interfaces rcl_interfaces msgs.gen.go && go tool rclgo-gen generate -d . --include-package-deps rcl_interfaces --message-module-prefix github.com/timealign/timealign/msgs --cgo-flags-path ''"
//go:generate sh -c "find . -name '*.gen.go' -exec sed -i -e '/^#cgo CFLAGS: \"-I/d' -e '/^#cgo LDFLAGS: \"-L/d' -e '1i //go:build ros2\\n' {} +"
//go:generate gofmt -w .
