package nodekit

import "github.com/timealign/timealign/pkg/params"

// call runs f on the owner goroutine (which owns the parameter Server) and
// waits for it; false if the node is closing (the request goes
// unanswered). The transport calls it from its own goroutine.
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

// paramService answers the parameter services through the owner
// goroutine; a set publishes its parameter events.
type paramService struct{ n *Node }

func (s paramService) ListParameters(req params.ListParametersRequest) (res params.ListParametersResponse, ok bool) {
	ok = s.n.call(func() { res = s.n.Params.ListParameters(req) })
	return res, ok
}

func (s paramService) GetParameters(req params.GetParametersRequest) (res params.GetParametersResponse, ok bool) {
	ok = s.n.call(func() { res = s.n.Params.GetParameters(req) })
	return res, ok
}

func (s paramService) SetParameters(req params.SetParametersRequest) (res params.SetParametersResponse, ok bool) {
	ok = s.n.call(func() {
		res = s.n.Params.SetParameters(req)
		s.n.publishEvents()
	})
	return res, ok
}

func (s paramService) SetParametersAtomically(req params.SetParametersAtomicallyRequest) (res params.SetParametersAtomicallyResponse, ok bool) {
	ok = s.n.call(func() {
		res = s.n.Params.SetParametersAtomically(req)
		s.n.publishEvents()
	})
	return res, ok
}

func (s paramService) DescribeParameters(req params.DescribeParametersRequest) (res params.DescribeParametersResponse, ok bool) {
	ok = s.n.call(func() { res = s.n.Params.DescribeParameters(req) })
	return res, ok
}

func (s paramService) GetParameterTypes(req params.GetParameterTypesRequest) (res params.GetParameterTypesResponse, ok bool) {
	ok = s.n.call(func() { res = s.n.Params.GetParameterTypes(req) })
	return res, ok
}
