// Package nodekit is the timealign node runtime, without ROS: everything a
// node does besides calling rcl, so that plain `go test -race ./...` runs
// it. Package rosnode plugs rclgo in as the [Transport]; package memros is
// an in-memory one for tests.
//
//   - [Node] and [Spec]: a node is its parameters, its topics ([Port]) and
//     its [Core] (the algorithm: handle a message, tick, reconfigure, and
//     once a second a [Report]: its status message and its health).
//     The runtime declares and serves the parameters, waits for the types of
//     inputs given none (discovery), creates the outputs, subscribes the
//     inputs, and runs one owner goroutine that drives the core and
//     publishes ~/status and /diagnostics once a second in every phase.
//     [Main] runs a node until SIGINT or SIGTERM.
//
//   - [Inbox]: the bounded queue between the transport's callbacks and the
//     owner goroutine. Messages are handed over, not copied, so a message
//     of any size costs nothing to queue; the inbox is bounded in messages
//     and in bytes (runtimeparams.Limits: the parameters inbox.max_messages
//     and inbox.max_bytes); to make room it drops the oldest message of the
//     input holding the most (a flood sheds its own backlog, the other
//     inputs keep theirs, the core gets recent messages) and counts the
//     drops per input.
//
//   - [Group]: every goroutine a node starts, tracked, so Close waits for
//     all of them.
//
//   - [Diagnostic] and [Level]: the contents of diagnostic_msgs/
//     DiagnosticStatus, built from an algorithm's health; [CDR] and
//     [AppendDiagnosticArray] encode them (and the nodes' status messages)
//     without generated bindings.
//
//   - [Clock]: the ROS time (the system clock, or /clock with use_sim_time)
//     and the monotonic time the runtime paces itself by.
//
//   - [CheckHeaderFirst]: refuses input types whose installed definition
//     does not start with a std_msgs/Header.
//
//   - [BufPool]: buffers of big messages reused from one taken message to
//     the next, bounded and released when unused.
//
// Threading: an Inbox may be offered to from any goroutine, a Clock read
// from any; a Node's core, parameter server and publishers belong to
// whoever holds its owner lock: the owner goroutine (Run), or the
// transport's goroutine handling a small message inline (Node.deliverer).
package nodekit
