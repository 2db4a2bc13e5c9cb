package params

// The six parameter services: request and response structs that mirror the
// rcl_interfaces/srv types field for field, and Server methods that answer
// them. The ROS adapter copies the generated messages into these, calls the
// method on the node's owner goroutine, copies the response back, and then
// publishes TakeEvents() on /parameter_events.

// Service names, relative to the node ("~/" + name); rclcpp creates them as
// "<node name>/<service>" in the node's namespace, which is the same.
const (
	SrvListParameters          = "list_parameters"
	SrvGetParameters           = "get_parameters"
	SrvSetParameters           = "set_parameters"
	SrvSetParametersAtomically = "set_parameters_atomically"
	SrvDescribeParameters      = "describe_parameters"
	SrvGetParameterTypes       = "get_parameter_types"
	// EventsTopic is the topic of rcl_interfaces/msg/ParameterEvent.
	EventsTopic = "/parameter_events"
)

// ParameterMsg mirrors rcl_interfaces/msg/Parameter.
type ParameterMsg struct {
	Name  string
	Value ValueMsg
}

// SetResult mirrors rcl_interfaces/msg/SetParametersResult.
type SetResult struct {
	Successful bool
	Reason     string
}

// EventMsg mirrors rcl_interfaces/msg/ParameterEvent without its stamp,
// which the adapter sets from the node clock.
type EventMsg struct {
	Node              string
	NewParameters     []ParameterMsg
	ChangedParameters []ParameterMsg
	DeletedParameters []ParameterMsg
}

// ListParametersRequest mirrors rcl_interfaces/srv/ListParameters_Request.
type ListParametersRequest struct {
	Prefixes []string
	Depth    uint64
}

// ListParametersResponse mirrors rcl_interfaces/srv/ListParameters_Response.
type ListParametersResponse struct{ Result ListResult }

// GetParametersRequest mirrors rcl_interfaces/srv/GetParameters_Request.
type GetParametersRequest struct{ Names []string }

// GetParametersResponse mirrors rcl_interfaces/srv/GetParameters_Response.
type GetParametersResponse struct{ Values []ValueMsg }

// SetParametersRequest mirrors rcl_interfaces/srv/SetParameters_Request.
type SetParametersRequest struct{ Parameters []ParameterMsg }

// SetParametersResponse mirrors rcl_interfaces/srv/SetParameters_Response.
type SetParametersResponse struct{ Results []SetResult }

// SetParametersAtomicallyRequest mirrors
// rcl_interfaces/srv/SetParametersAtomically_Request.
type SetParametersAtomicallyRequest struct{ Parameters []ParameterMsg }

// SetParametersAtomicallyResponse mirrors
// rcl_interfaces/srv/SetParametersAtomically_Response.
type SetParametersAtomicallyResponse struct{ Result SetResult }

// DescribeParametersRequest mirrors rcl_interfaces/srv/DescribeParameters_Request.
type DescribeParametersRequest struct{ Names []string }

// DescribeParametersResponse mirrors rcl_interfaces/srv/DescribeParameters_Response.
type DescribeParametersResponse struct{ Descriptors []DescriptorMsg }

// GetParameterTypesRequest mirrors rcl_interfaces/srv/GetParameterTypes_Request.
type GetParameterTypesRequest struct{ Names []string }

// GetParameterTypesResponse mirrors rcl_interfaces/srv/GetParameterTypes_Response.
type GetParameterTypesResponse struct{ Types []uint8 }

// Msg returns the parameter as an rcl_interfaces/msg/Parameter.
func (p Parameter) Msg() ParameterMsg { return ParameterMsg{Name: p.Name, Value: p.Value.Msg()} }

// Msg returns the event as an rcl_interfaces/msg/ParameterEvent.
func (e Event) Msg() EventMsg {
	conv := func(ps []Parameter) []ParameterMsg {
		out := make([]ParameterMsg, len(ps))
		for i, p := range ps {
			out[i] = p.Msg()
		}
		return out
	}
	return EventMsg{Node: e.Node, NewParameters: conv(e.New), ChangedParameters: conv(e.Changed), DeletedParameters: conv(e.Deleted)}
}

func result(err error) SetResult {
	if err != nil {
		return SetResult{Reason: err.Error()}
	}
	return SetResult{Successful: true}
}

// ListParameters answers list_parameters (see [Server.List]).
func (s *Server) ListParameters(req ListParametersRequest) ListParametersResponse {
	return ListParametersResponse{Result: s.List(req.Prefixes, req.Depth)}
}

// GetParameters answers get_parameters: one value per name, in order,
// NOT_SET for names not declared. (rclcpp answers an empty list when any
// name is undeclared; the service definition, rclpy and this server keep
// the lengths equal.)
func (s *Server) GetParameters(req GetParametersRequest) GetParametersResponse {
	out := make([]ValueMsg, len(req.Names))
	for i, n := range req.Names {
		v, _ := s.Get(n)
		out[i] = v.Msg()
	}
	return GetParametersResponse{Values: out}
}

// SetParameters answers set_parameters: each parameter set on its own, one
// result per parameter with rclcpp's reasons.
func (s *Server) SetParameters(req SetParametersRequest) SetParametersResponse {
	out := make([]SetResult, len(req.Parameters))
	for i, pm := range req.Parameters {
		v, err := FromMsg(pm.Value)
		if err == nil {
			_, err = s.setAtomically([]Parameter{{pm.Name, v}}, false)
		} else {
			s.st.SetsRejected++
		}
		out[i] = result(err)
	}
	return SetParametersResponse{Results: out}
}

// SetParametersAtomically answers set_parameters_atomically: all or none.
func (s *Server) SetParametersAtomically(req SetParametersAtomicallyRequest) SetParametersAtomicallyResponse {
	ps := make([]Parameter, len(req.Parameters))
	for i, pm := range req.Parameters {
		v, err := FromMsg(pm.Value)
		if err != nil {
			s.st.SetsRejected += uint64(len(ps))
			return SetParametersAtomicallyResponse{Result: result(paramErr(pm.Name, err, "parameter '"+pm.Name+"': "+err.Error()))}
		}
		ps[i] = Parameter{pm.Name, v}
	}
	_, err := s.SetAtomically(ps...)
	return SetParametersAtomicallyResponse{Result: result(err)}
}

// DescribeParameters answers describe_parameters: one descriptor per name,
// in order; a name not declared gets a descriptor with only its name (type
// NOT_SET). (rclcpp answers an empty list when any name is undeclared.)
func (s *Server) DescribeParameters(req DescribeParametersRequest) DescribeParametersResponse {
	out := make([]DescriptorMsg, len(req.Names))
	for i, n := range req.Names {
		d, _ := s.Describe(n)
		out[i] = d.Msg()
	}
	return DescribeParametersResponse{Descriptors: out}
}

// GetParameterTypes answers get_parameter_types: one type per name, in
// order, NOT_SET for names not declared.
func (s *Server) GetParameterTypes(req GetParameterTypesRequest) GetParameterTypesResponse {
	out := make([]uint8, len(req.Names))
	for i, n := range req.Names {
		v, _ := s.Get(n)
		out[i] = uint8(v.Type())
	}
	return GetParameterTypesResponse{Types: out}
}
