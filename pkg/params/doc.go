// Package params is ROS 2 parameters without ROS: what makes `ros2 param
// list/get/set/describe/dump` and parameter files work for a node written
// on rclgo (which has no parameter support), kept free of cgo and rcl so CI
// tests every rule.
//
// # Pieces
//
//   - [Value], [Type], [Parameter]: rcl_interfaces/msg/ParameterValue with
//     the ParameterType codes 0..9; Msg/FromMsg convert to structs that
//     mirror the generated messages field for field.
//   - [Descriptor] with [FloatRange] and [IntRange]: ParameterDescriptor,
//     with rclcpp's range and step semantics (bounds always valid, then
//     From + k·Step; doubles compared within 100 ULP).
//   - [Server]: a node's parameter store. Declare (initial value from the
//     overrides when valid), Undeclare, Get, Set (one at a time),
//     SetAtomically (all or none), List, Describe; validators that can
//     reject a change with a reason, appliers told of accepted changes;
//     parameter events queued for /parameter_events; [Server.Issues] lists
//     rejected and unknown overrides for the node to log. The six service
//     handlers ([Server.ListParameters], [Server.GetParameters],
//     [Server.SetParameters], [Server.SetParametersAtomically],
//     [Server.DescribeParameters], [Server.GetParameterTypes]) take and
//     return structs mirroring rcl_interfaces/srv.
//   - [Binder]: declares parameters bound to the fields of a node's Config
//     (bool, int, int64, float64, string, enumerations, durations, arrays;
//     others through [Binder.Func]), validates every change by running the config's
//     Validate on the would-be config, and writes accepted values into the
//     fields.
//   - [ParseFile], [ParseValue]: YAML parameter files and -p values with
//     the rules of rcl_yaml_param_parser; [Rule] is one -p override;
//     [ResolveOverrides] and [LoadOverrides] pick the values for one node
//     (wildcards /** and /*, later files win, -p wins over files).
//
// The rest of a node's start-up lives beside it: package rosargs reads the
// command line (--ros-args: -p rules, --params-file, remap rules), package
// rosname validates, expands and remaps names, and package qos binds a QoS
// profile to parameters with this package's [Binder].
//
// # Conventions
//
// Durations are DOUBLE parameters in seconds with a "_sec" suffix
// (window_sec: 0.25): ROS has no duration type and seconds are what users
// write. They convert to time.Duration rounded to the nanosecond, exact in
// both directions below 2^50 ns (13 days). Enumerations are STRING
// parameters listing their choices in additional_constraints. QoS
// parameters (package qos) are read-only
// "<prefix>.reliability|durability|history|depth".
//
// Unknown override names are warnings; overrides of the wrong type, out of
// range, or rejected by the config's Validate are errors that keep the
// default; the node runs either way. Malformed files and arguments are
// errors naming the file, line and parameter, or the argument.
//
// Where this package departs from rclcpp, it says so: get/describe of an
// undeclared name answer NOT_SET entries instead of an empty list (the
// service definition, and rclpy, keep the lengths equal); a NaN never
// satisfies a floating point range; Undeclare queues a deleted-parameter
// event; and the precedence of overrides is simply files in order, then -p
// (rcl orders by first appearance of each node pattern).
//
// # Threading and cost
//
// Nothing here starts goroutines, reads clocks or files, or logs. A Server
// and its Binders belong to the node's owner goroutine. Get is a map
// lookup; Set costs the checks plus the validators (for a Binder, one
// Config.Validate) and appends one event; events beyond Options.MaxEvents
// are dropped oldest first and counted, so memory stays bounded when
// nobody drains them. List sorts the names: O(n log n) per call.
package params
