#!/bin/sh
# Regenerates the Go bindings in msgs/ (run by `go generate ./msgs`, see
# generate.go) with ROS 2 (Humble or Jazzy) and this package's colcon
# install sourced. rclgo-gen stops at Humble unless told to go on: the
# bindings it writes use the C message structs only, which are the same on
# Jazzy (its type support structs, which differ, stay inside rcl), and
# .ci/ros2 regenerates them on every installed distribution and requires
# the same files.
set -e
cd "$(dirname "$0")"
rm -rf builtin_interfaces diagnostic_msgs geometry_msgs rcl_interfaces rosgraph_msgs std_msgs timealign msgs.gen.go
go tool rclgo-gen generate -d . \
	--include-package-deps rcl_interfaces --include-package-deps diagnostic_msgs \
	--include-package-deps timealign \
	--message-module-prefix github.com/timealign/timealign/msgs --cgo-flags-path '' \
	--ignore-ros-distro-mismatch
# rclgo-gen's msgs.gen.go imports every package for its side effects;
# nothing here needs that, and it would tie all of them to msgs/timealign.
rm -f msgs.gen.go
# rclgo-gen generates whole packages; keep only the types the nodes and the
# tests import and the types those use (the nodes take every other message,
# /clock included, as serialized bytes with dynamic type support). A type
# needed later is added to its list here.
keep() {
	dir=$1
	shift
	for t in "$@"; do
		[ -f "$dir/$t.gen.go" ] || { echo "generate.sh: rclgo-gen made no $dir/$t.gen.go" >&2; exit 1; }
	done
	for f in "$dir"/*.gen.go; do
		case " common $* " in
		*" $(basename "$f" .gen.go) "*) ;;
		*) rm "$f" ;;
		esac
	done
}
rm -rf diagnostic_msgs/srv
keep std_msgs/msg Header
keep rcl_interfaces/msg FloatingPointRange IntegerRange ListParametersResult Log Parameter \
	ParameterDescriptor ParameterEvent ParameterType ParameterValue SetParametersResult
# the parameter services (Jazzy adds GetLoggerLevels and SetLoggerLevels,
# which nothing here uses)
keep rcl_interfaces/srv \
	DescribeParameters DescribeParameters_Request DescribeParameters_Response GetParameterTypes \
	GetParameterTypes_Request GetParameterTypes_Response GetParameters GetParameters_Request \
	GetParameters_Response ListParameters ListParameters_Request ListParameters_Response \
	SetParameters SetParameters_Request SetParameters_Response SetParametersAtomically \
	SetParametersAtomically_Request SetParametersAtomically_Response
# Drop every include and library path: they name the distribution and the
# workspace of the machine that ran this (a Humble path kept in a Jazzy
# build would let cgo take a missing header or library from Humble). The
# builds pass the sourced environment's in CGO_CFLAGS and CGO_LDFLAGS
# (CMakeLists.txt, .ci/ros2, test/colcon_go_test.sh).
find . -name '*.gen.go' -exec sed -i \
	-e '/^#cgo CFLAGS: "-I/d' -e '/^#cgo LDFLAGS: "-L/d' {} +
# Build constraints: ros2 for all; this package's own interfaces also need
# its colcon install (their C headers and libraries): timealign_interfaces.
find timealign -name '*.gen.go' -exec sed -i '1i //go:build ros2 \&\& timealign_interfaces\n' {} +
find . -path ./timealign -prune -o -name '*.gen.go' -exec sed -i '1i //go:build ros2\n' {} +
gofmt -w .
