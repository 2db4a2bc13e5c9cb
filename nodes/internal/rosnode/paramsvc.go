//go:build ros2

package rosnode

import (
	"fmt"

	"github.com/tiiuae/rclgo/pkg/rclgo"

	builtin "github.com/timealign/timealign/msgs/builtin_interfaces/msg"
	rcl "github.com/timealign/timealign/msgs/rcl_interfaces/msg"
	srv "github.com/timealign/timealign/msgs/rcl_interfaces/srv"
	"github.com/timealign/timealign/pkg/params"
)

// call runs f on the owner goroutine (which owns the parameter Server) and
// waits for it; false if the node is shutting down.
func (n *Node) call(f func()) bool {
	done := make(chan struct{})
	select {
	case n.calls <- func() { f(); close(done) }:
	case <-n.closing:
		return false
	}
	select {
	case <-done:
		return true
	case <-n.closing:
		return false
	}
}

func toParams(ps []rcl.Parameter) []params.ParameterMsg {
	out := make([]params.ParameterMsg, len(ps))
	for i, p := range ps {
		out[i] = params.ParameterMsg{Name: p.Name, Value: params.ValueMsg(p.Value)}
	}
	return out
}

func fromParams(ps []params.ParameterMsg) []rcl.Parameter {
	out := make([]rcl.Parameter, len(ps))
	for i, p := range ps {
		out[i] = rcl.Parameter{Name: p.Name, Value: rcl.ParameterValue(p.Value)}
	}
	return out
}

func fromDescriptor(d params.DescriptorMsg) rcl.ParameterDescriptor {
	r := rcl.ParameterDescriptor{Name: d.Name, Type: d.Type, Description: d.Description,
		AdditionalConstraints: d.AdditionalConstraints, ReadOnly: d.ReadOnly, DynamicTyping: d.DynamicTyping}
	for _, f := range d.FloatingPointRange {
		r.FloatingPointRange = append(r.FloatingPointRange, rcl.FloatingPointRange{FromValue: f.From, ToValue: f.To, Step: f.Step})
	}
	for _, i := range d.IntegerRange {
		r.IntegerRange = append(r.IntegerRange, rcl.IntegerRange{FromValue: i.From, ToValue: i.To, Step: i.Step})
	}
	return r
}

// serveParameters creates the six standard parameter services and the
// /parameter_events publisher, so `ros2 param list/get/set/describe/dump`
// work. Requests are answered on the owner goroutine.
func (n *Node) serveParameters() error {
	name := func(s string) string { return n.node.FullyQualifiedName() + "/" + s }
	var errs []error
	add := func(err error, svc func() *rclgo.Service) {
		if err != nil {
			errs = append(errs, cleanErr(err))
			return
		}
		n.ws.AddServices(svc())
	}
	ls, err := srv.NewListParametersService(n.node, name(params.SrvListParameters), nil,
		func(_ *rclgo.ServiceInfo, req *srv.ListParameters_Request, rs srv.ListParametersServiceResponseSender) {
			var res params.ListParametersResponse
			if n.call(func() {
				res = n.Params.ListParameters(params.ListParametersRequest{Prefixes: req.Prefixes, Depth: req.Depth})
			}) {
				_ = rs.SendResponse(&srv.ListParameters_Response{Result: rcl.ListParametersResult{Names: res.Result.Names, Prefixes: res.Result.Prefixes}})
			}
		})
	add(err, func() *rclgo.Service { return ls.Service })
	gs, err := srv.NewGetParametersService(n.node, name(params.SrvGetParameters), nil,
		func(_ *rclgo.ServiceInfo, req *srv.GetParameters_Request, rs srv.GetParametersServiceResponseSender) {
			var res params.GetParametersResponse
			if n.call(func() { res = n.Params.GetParameters(params.GetParametersRequest{Names: req.Names}) }) {
				out := &srv.GetParameters_Response{Values: make([]rcl.ParameterValue, len(res.Values))}
				for i, v := range res.Values {
					out.Values[i] = rcl.ParameterValue(v)
				}
				_ = rs.SendResponse(out)
			}
		})
	add(err, func() *rclgo.Service { return gs.Service })
	ss, err := srv.NewSetParametersService(n.node, name(params.SrvSetParameters), nil,
		func(_ *rclgo.ServiceInfo, req *srv.SetParameters_Request, rs srv.SetParametersServiceResponseSender) {
			var res params.SetParametersResponse
			if n.call(func() {
				res = n.Params.SetParameters(params.SetParametersRequest{Parameters: toParams(req.Parameters)})
				n.publishEvents()
			}) {
				out := &srv.SetParameters_Response{Results: make([]rcl.SetParametersResult, len(res.Results))}
				for i, r := range res.Results {
					out.Results[i] = rcl.SetParametersResult{Successful: r.Successful, Reason: r.Reason}
				}
				_ = rs.SendResponse(out)
			}
		})
	add(err, func() *rclgo.Service { return ss.Service })
	sa, err := srv.NewSetParametersAtomicallyService(n.node, name(params.SrvSetParametersAtomically), nil,
		func(_ *rclgo.ServiceInfo, req *srv.SetParametersAtomically_Request, rs srv.SetParametersAtomicallyServiceResponseSender) {
			var res params.SetParametersAtomicallyResponse
			if n.call(func() {
				res = n.Params.SetParametersAtomically(params.SetParametersAtomicallyRequest{Parameters: toParams(req.Parameters)})
				n.publishEvents()
			}) {
				_ = rs.SendResponse(&srv.SetParametersAtomically_Response{Result: rcl.SetParametersResult{Successful: res.Result.Successful, Reason: res.Result.Reason}})
			}
		})
	add(err, func() *rclgo.Service { return sa.Service })
	ds, err := srv.NewDescribeParametersService(n.node, name(params.SrvDescribeParameters), nil,
		func(_ *rclgo.ServiceInfo, req *srv.DescribeParameters_Request, rs srv.DescribeParametersServiceResponseSender) {
			var res params.DescribeParametersResponse
			if n.call(func() { res = n.Params.DescribeParameters(params.DescribeParametersRequest{Names: req.Names}) }) {
				out := &srv.DescribeParameters_Response{Descriptors: make([]rcl.ParameterDescriptor, len(res.Descriptors))}
				for i, d := range res.Descriptors {
					out.Descriptors[i] = fromDescriptor(d)
				}
				_ = rs.SendResponse(out)
			}
		})
	add(err, func() *rclgo.Service { return ds.Service })
	ts, err := srv.NewGetParameterTypesService(n.node, name(params.SrvGetParameterTypes), nil,
		func(_ *rclgo.ServiceInfo, req *srv.GetParameterTypes_Request, rs srv.GetParameterTypesServiceResponseSender) {
			var res params.GetParameterTypesResponse
			if n.call(func() { res = n.Params.GetParameterTypes(params.GetParameterTypesRequest{Names: req.Names}) }) {
				_ = rs.SendResponse(&srv.GetParameterTypes_Response{Types: res.Types})
			}
		})
	add(err, func() *rclgo.Service { return ts.Service })
	n.events, err = rcl.NewParameterEventPublisher(n.node, "/parameter_events", nil)
	if err != nil {
		errs = append(errs, cleanErr(err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("parameter services: %v", errs)
	}
	return nil
}

// publishEvents publishes the parameter events the Server queued.
func (n *Node) publishEvents() {
	if n.events == nil {
		return
	}
	sec, nsec, _ := n.Clock.Now().ROS()
	for _, e := range n.Params.TakeEvents() {
		m := e.Msg()
		ev := &rcl.ParameterEvent{Node: m.Node, NewParameters: fromParams(m.NewParameters),
			ChangedParameters: fromParams(m.ChangedParameters), DeletedParameters: fromParams(m.DeletedParameters),
			Stamp: builtin.Time{Sec: sec, Nanosec: nsec}}
		if err := n.events.Publish(ev); err != nil {
			n.Warn("publish /parameter_events: ", cleanErr(err))
		}
	}
}
