//go:build ros2

package rosnode

import (
	"errors"
	"fmt"

	"github.com/tiiuae/rclgo/pkg/rclgo"

	builtin "github.com/timealign/timealign/msgs/builtin_interfaces/msg"
	rcl "github.com/timealign/timealign/msgs/rcl_interfaces/msg"
	srv "github.com/timealign/timealign/msgs/rcl_interfaces/srv"
	"github.com/timealign/timealign/nodes/internal/nodekit"
	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/stamp"
)

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

type eventPublisher = rcl.ParameterEventPublisher

// ServeParameters implements nodekit.Transport: the six standard
// parameter services, answered by h (which hands each request to the
// node's owner goroutine), and the /parameter_events publisher.
func (t *transport) ServeParameters(h nodekit.ParameterHandler) error {
	name := func(s string) string { return t.node.FullyQualifiedName() + "/" + s }
	var errs []error
	var svcs []*rclgo.Service
	add := func(err error, svc func() *rclgo.Service) {
		if err != nil {
			errs = append(errs, cleanErr(err))
			return
		}
		svcs = append(svcs, svc())
	}
	ls, err := srv.NewListParametersService(t.node, name(params.SrvListParameters), nil,
		func(_ *rclgo.ServiceInfo, req *srv.ListParameters_Request, rs srv.ListParametersServiceResponseSender) {
			if res, ok := h.ListParameters(params.ListParametersRequest{Prefixes: req.Prefixes, Depth: req.Depth}); ok {
				t.replied("list_parameters", rs.SendResponse(&srv.ListParameters_Response{Result: rcl.ListParametersResult{Names: res.Result.Names, Prefixes: res.Result.Prefixes}}))
			}
		})
	add(err, func() *rclgo.Service { return ls.Service })
	gs, err := srv.NewGetParametersService(t.node, name(params.SrvGetParameters), nil,
		func(_ *rclgo.ServiceInfo, req *srv.GetParameters_Request, rs srv.GetParametersServiceResponseSender) {
			if res, ok := h.GetParameters(params.GetParametersRequest{Names: req.Names}); ok {
				out := &srv.GetParameters_Response{Values: make([]rcl.ParameterValue, len(res.Values))}
				for i, v := range res.Values {
					out.Values[i] = rcl.ParameterValue(v)
				}
				t.replied("get_parameters", rs.SendResponse(out))
			}
		})
	add(err, func() *rclgo.Service { return gs.Service })
	ss, err := srv.NewSetParametersService(t.node, name(params.SrvSetParameters), nil,
		func(_ *rclgo.ServiceInfo, req *srv.SetParameters_Request, rs srv.SetParametersServiceResponseSender) {
			if res, ok := h.SetParameters(params.SetParametersRequest{Parameters: toParams(req.Parameters)}); ok {
				out := &srv.SetParameters_Response{Results: make([]rcl.SetParametersResult, len(res.Results))}
				for i, r := range res.Results {
					out.Results[i] = rcl.SetParametersResult{Successful: r.Successful, Reason: r.Reason}
				}
				t.replied("set_parameters", rs.SendResponse(out))
			}
		})
	add(err, func() *rclgo.Service { return ss.Service })
	sa, err := srv.NewSetParametersAtomicallyService(t.node, name(params.SrvSetParametersAtomically), nil,
		func(_ *rclgo.ServiceInfo, req *srv.SetParametersAtomically_Request, rs srv.SetParametersAtomicallyServiceResponseSender) {
			if res, ok := h.SetParametersAtomically(params.SetParametersAtomicallyRequest{Parameters: toParams(req.Parameters)}); ok {
				t.replied("set_parameters_atomically", rs.SendResponse(&srv.SetParametersAtomically_Response{Result: rcl.SetParametersResult{Successful: res.Result.Successful, Reason: res.Result.Reason}}))
			}
		})
	add(err, func() *rclgo.Service { return sa.Service })
	ds, err := srv.NewDescribeParametersService(t.node, name(params.SrvDescribeParameters), nil,
		func(_ *rclgo.ServiceInfo, req *srv.DescribeParameters_Request, rs srv.DescribeParametersServiceResponseSender) {
			if res, ok := h.DescribeParameters(params.DescribeParametersRequest{Names: req.Names}); ok {
				out := &srv.DescribeParameters_Response{Descriptors: make([]rcl.ParameterDescriptor, len(res.Descriptors))}
				for i, d := range res.Descriptors {
					out.Descriptors[i] = fromDescriptor(d)
				}
				t.replied("describe_parameters", rs.SendResponse(out))
			}
		})
	add(err, func() *rclgo.Service { return ds.Service })
	ts, err := srv.NewGetParameterTypesService(t.node, name(params.SrvGetParameterTypes), nil,
		func(_ *rclgo.ServiceInfo, req *srv.GetParameterTypes_Request, rs srv.GetParameterTypesServiceResponseSender) {
			if res, ok := h.GetParameterTypes(params.GetParameterTypesRequest{Names: req.Names}); ok {
				t.replied("get_parameter_types", rs.SendResponse(&srv.GetParameterTypes_Response{Types: res.Types}))
			}
		})
	add(err, func() *rclgo.Service { return ts.Service })
	t.add(svcs)
	t.events, err = rcl.NewParameterEventPublisher(t.node, params.EventsTopic, nil)
	if err != nil {
		errs = append(errs, cleanErr(err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("parameter services: %w", errors.Join(errs...))
	}
	return nil
}

// PublishParameterEvent implements nodekit.Transport.
func (t *transport) PublishParameterEvent(e params.EventMsg, at stamp.Time) error {
	if t.events == nil {
		return errors.New("no /parameter_events publisher")
	}
	sec, nsec, _ := at.ROS()
	ev := &rcl.ParameterEvent{Node: e.Node, NewParameters: fromParams(e.NewParameters),
		ChangedParameters: fromParams(e.ChangedParameters), DeletedParameters: fromParams(e.DeletedParameters),
		Stamp: builtin.Time{Sec: sec, Nanosec: nsec}}
	return cleanErr(t.events.Publish(ev))
}

// replied logs a parameter service's response that could not be sent (the
// client gone before its answer, a middleware error): the request was
// applied, only its answer is lost, so the node goes on.
func (t *transport) replied(service string, err error) {
	if err != nil {
		t.Log(nodekit.LogWarn, fmt.Sprintf("%s: the response could not be sent: %v", service, cleanErr(err)))
	}
}
