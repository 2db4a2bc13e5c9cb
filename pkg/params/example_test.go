package params_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/qos"
	"github.com/timealign/timealign/pkg/rosargs"
	"github.com/timealign/timealign/pkg/rosname"
)

// config stands for an algorithm's Config (tsest.Config, pll.Config, ...).
type config struct {
	Window time.Duration
	Period time.Duration
	Loss   int
	In     qos.Profile
}

func (c *config) Validate() error {
	if c.Window < 2*c.Period {
		return fmt.Errorf("Window (%s) must be at least twice Period (%s)", c.Window, c.Period)
	}
	return nil
}

// A node declares its parameters from --ros-args (package rosargs reads
// them, rosname resolves its names) and a params file, logs
// what it could not take, and rejects a bad value set at run time with
// the config's own reason.
func Example() {
	argv := []string{"--ros-args", "-r", "__ns:=/sensors", "-r", "in:=/imu/data_raw",
		"--params-file", "node.yaml", "-p", "loss_threshold:=4"}
	files := map[string]string{"node.yaml": `
/**/estimator:
  ros__parameters:
    window_sec: 0.5
    loss_threshold: 2     # -p wins over files
    period_sec: 1         # wrong type (an integer): rejected, default kept
    qos:
      in:
        depth: 10
    windw_sec: 1.0        # typo: reported
`}
	read := func(path string) ([]byte, error) { return []byte(files[path]), nil }

	args, err := rosargs.ParseArgs(argv)
	if err != nil {
		fmt.Println(err)
		return
	}
	node, err := rosname.NewNodeName("estimator", "", args.Remaps)
	if err != nil {
		fmt.Println(err)
		return
	}
	overrides, err := params.LoadOverrides(node.FQN(), args.ParamFiles, args.Params, read)
	if err != nil {
		fmt.Println(err)
	}
	srv := params.NewServer(params.Options{Node: node.FQN(), Overrides: overrides})

	cfg := config{Window: time.Second, Period: 100 * time.Millisecond, Loss: 3, In: qos.SensorData()}
	b := params.NewBinder(srv, cfg.Validate)
	b.Duration("window_sec", &cfg.Window, params.Descriptor{Description: "estimation window", FloatRange: params.Floats(0, 3600, 0)})
	b.Duration("period_sec", &cfg.Period, params.Descriptor{Description: "nominal sample period"})
	b.Int("loss_threshold", &cfg.Loss, params.Descriptor{IntRange: params.Ints(1, 100, 1)})
	qos.Bind(b, "qos.in", &cfg.In)
	if err := b.Declare(); err != nil {
		fmt.Println(err)
		return
	}
	for _, is := range srv.Issues() {
		fmt.Println(is)
	}
	in, _ := node.Topic("in")
	status, _ := node.Topic("~/status")
	fmt.Println(node.FQN(), in, status)
	fmt.Println(cfg.Window, cfg.Period, cfg.Loss, cfg.In)

	// ros2 param set /sensors/estimator window_sec 0.1
	res := srv.SetParameters(params.SetParametersRequest{Parameters: []params.ParameterMsg{
		{Name: "window_sec", Value: params.DoubleValue(0.1).Msg()},
	}})
	fmt.Printf("%+v\n", res.Results[0])
	// ros2 param set /sensors/estimator window_sec 0.4
	errs := srv.Set(params.Parameter{Name: "window_sec", Value: params.DoubleValue(0.4)})
	fmt.Println(errs[0], cfg.Window)
	for _, ev := range srv.TakeEvents() { // for /parameter_events
		if len(ev.Changed) > 0 {
			fmt.Println("changed:", ev.Changed)
		}
	}
	fmt.Println(errors.Is(srv.Set(params.Parameter{Name: "qos.in.depth", Value: params.IntValue(1)})[0], params.ErrReadOnly))

	// Output:
	// error: parameter "period_sec" (node.yaml:6): value 1 rejected, keeping 0.1: Wrong parameter type, parameter {period_sec} is of type {double}, setting it to {integer} is not allowed. (Write 1.0 for a double.)
	// warning: parameter "windw_sec" (node.yaml:10): not a parameter of this node; ignored
	// /sensors/estimator /imu/data_raw /sensors/estimator/status
	// 500ms 100ms 4 best_effort/volatile/keep_last(10)
	// {Successful:false Reason:Window (100ms) must be at least twice Period (100ms)}
	// <nil> 400ms
	// changed: [window_sec: 0.4]
	// true
}

// ParseValue types values the way rcl types a YAML parameter file.
func ExampleParseValue() {
	for _, s := range []string{"true", "42", "010", "0x10", "1e3", ".inf", "'42'", "y", "[1, 2]", "[a, b]", "[1, 2.5]"} {
		v, err := params.ParseValue(s)
		if err != nil {
			fmt.Printf("%-9s error: %v\n", s, err)
			continue
		}
		fmt.Printf("%-9s %-13s %s\n", s, v.Type(), v)
	}
	// Output:
	// true      bool          true
	// 42        integer       42
	// 010       integer       8
	// 0x10      integer       16
	// 1e3       double        1000.0
	// .inf      double        .inf
	// '42'      string        "42"
	// y         bool          true
	// [1, 2]    integer_array [1, 2]
	// [a, b]    string_array  [a, b]
	// [1, 2.5]  error: line 1: arrays must have elements of one type: double "2.5" among integers
}

// List has the depth semantics of rcl_interfaces/srv/ListParameters.
func ExampleServer_List() {
	srv := params.NewServer(params.Options{Node: "/n"})
	for _, name := range []string{"rate", "qos.in.depth", "qos.in.reliability", "qos.out.depth"} {
		_, _ = srv.Declare(name, params.IntValue(1), params.Descriptor{})
	}
	fmt.Printf("%+v\n", srv.List(nil, params.DepthRecursive))
	fmt.Printf("%+v\n", srv.List(nil, 1))
	fmt.Printf("%+v\n", srv.List([]string{"qos.in"}, params.DepthRecursive))
	// Output:
	// {Names:[qos.in.depth qos.in.reliability qos.out.depth rate] Prefixes:[qos.in qos.out]}
	// {Names:[rate] Prefixes:[]}
	// {Names:[qos.in.depth qos.in.reliability] Prefixes:[qos.in]}
}
