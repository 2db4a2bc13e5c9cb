// Package rosargs reads a ROS 2 process's command line without ROS: the
// --ros-args sections as rcl_parse_arguments reads them (-p parameter
// rules, --params-file, -r remap rules, log levels, enclave, log toggles),
// with rcl's lexer for names and rules and its messages for what it
// refuses.
//
// [ParseArgs] returns [Args]: the parameter rules (values typed as
// params.ParseValue types them) go to params.LoadOverrides with the
// parameter files; the remap rules go to rosname.NewNodeName, which
// resolves the node's name and the topics and services it uses.
//
// Errors are [*ArgError] naming the argument and unwrapping to
// [ErrSyntax] or [ErrUnknownArg]. Nothing here starts goroutines, reads
// clocks or files, or logs; parsing is one pass over the arguments.
package rosargs
