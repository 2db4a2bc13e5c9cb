// Package rosname is ROS 2 names without ROS: node names, namespaces and
// topic and service names checked as rmw and rcl check them, expanded
// (relative, private "~/", substitutions) and remapped the way
// rcl_node_resolve_name does, so a node written on rclgo (which has no
// name remapping of its own) resolves its names as rclcpp would.
//
//   - [ValidateNodeName], [ValidateNamespace], [ValidateFullTopicName],
//     [ValidateTopicName]: rmw's and rcl's checks, with their messages
//     and the index of the first bad character.
//   - [ExpandTopicName], [FQN]: a name for a node, fully qualified.
//   - [Remap]: one remap rule (topic and service names, the node's name,
//     its namespace), as the command line gives it (package rosargs
//     parses them).
//   - [NodeName]: a node's name and namespace after its remap rules, and
//     [NodeName.Topic] and [NodeName.Service] to resolve the names it
//     uses.
//
// Errors wrap [ErrInvalidName]. Nothing here starts goroutines, reads
// clocks or files, or logs; resolving a name costs a few string scans per
// remap rule.
package rosname
