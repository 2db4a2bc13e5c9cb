#!/usr/bin/env bash
# Runs the Go tests for `colcon test` (CMakeLists.txt registers it twice with
# ament_add_test) and writes their JUnit XML where `colcon test-result`
# reads it. Usage:
#
#   colcon_go_test.sh core <go> <source dir> <result.xml>
#       the ROS-free suite: go test ./... (what CI runs; no ROS 2 needed)
#   colcon_go_test.sh ros2 <go> <source dir> <result.xml> <install prefix>
#       the ros2-tagged tests (nodes/..., the integration tests in test/)
#       against the package's colcon install at <install prefix>; reported
#       as skipped when the nodes are not installed there
#
# <go> is the go CMake found at configure time; `go` on PATH wins. The JUnit
# XML comes from `go test -json` through gotestsum (a tool of the module:
# `go tool gotestsum`).
set -uo pipefail
mode=${1:?mode}; go_cmd=${2:?go}; src=${3:?source dir}; result=${4:?result file}; prefix=${5:-}

if command -v go >/dev/null 2>&1; then
  go_cmd=$(command -v go)
elif [ -x "$go_cmd" ]; then
  echo "colcon_go_test: go is not on PATH; using $go_cmd (found when the package was configured)"
else
  msg="Go is not installed or not on PATH (and $go_cmd, found when the package was configured, is gone): the Go tests of timealign cannot run. Install Go $(sed -n 's/^go //p' "$src/go.mod") or newer (https://go.dev/dl/, or your distribution's backports) and put its bin/ directory on PATH."
  echo "colcon_go_test: ERROR: $msg" >&2
  mkdir -p "$(dirname "$result")"
  cat > "$result" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="timealign.$mode" tests="1" failures="1" errors="0">
  <testcase classname="timealign.$mode" name="go_toolchain"><failure message="$msg"/></testcase>
</testsuite>
EOF
  exit 1
fi
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly"
mkdir -p "$(dirname "$result")"
cd "$src" || exit 1

gotestsum() {
  "$go_cmd" tool gotestsum --format testname --junitfile "$result" \
    --junitfile-testsuite-name relative --junitfile-testcase-classname relative -- "$@"
}

case "$mode" in
core)
  gotestsum -count=1 ./...
  ;;
ros2)
  if [ -z "$prefix" ] || [ ! -x "$prefix/lib/timealign/timestamp_estimator" ]; then
    echo "colcon_go_test: the ROS 2 integration tests need the package installed: no $prefix/lib/timealign/timestamp_estimator (run colcon build first)"
    cat > "$result" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="timealign.ros2" tests="1" failures="0" errors="0" skipped="1">
  <testcase classname="timealign.ros2" name="integration_tests"><skipped message="the package is not installed at $prefix"/></testcase>
</testsuite>
EOF
    exit 0
  fi
  # cgo: the headers and libraries of the sourced ROS 2 and of this install.
  cflags="" ldflags=""
  IFS=: read -ra prefixes <<< "$prefix:${AMENT_PREFIX_PATH:-}"
  for p in "${prefixes[@]}"; do
    [ -n "$p" ] || continue
    for d in "$p"/include/*/; do [ -d "$d" ] && cflags+=" -I${d%/}"; done
    [ -d "$p/lib" ] && ldflags+=" -L$p/lib -Wl,-rpath,$p/lib"
  done
  # -Wno-deprecated-declarations: rclgo calls rcl_timer_init, deprecated
  # (still working) in Jazzy's rcl; CMakeLists.txt says the same.
  export CGO_ENABLED=1 CGO_CFLAGS="$cflags -Wno-deprecated-declarations" CGO_LDFLAGS="$ldflags"
  # The tests take the install as TIMEALIGN_INSTALL/timealign (an isolated
  # colcon install); a link makes a merged install look the same.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  ln -s "$prefix" "$tmp/timealign"
  TIMEALIGN_INSTALL="$tmp" gotestsum -count=1 -tags ros2,timealign_interfaces ./nodes/... ./test/...
  ;;
*)
  echo "colcon_go_test: unknown mode $mode (core or ros2)" >&2
  exit 2
  ;;
esac
