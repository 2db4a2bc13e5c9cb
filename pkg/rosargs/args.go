package rosargs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/timealign/timealign/pkg/params"
	"github.com/timealign/timealign/pkg/rosname"
)

// Sentinel errors: an [ArgError] unwraps to one of them.
var (
	// ErrSyntax: a malformed rule or a missing value after a flag. A -p
	// value that is not a parameter value also unwraps to
	// params.ErrSyntax.
	ErrSyntax = errors.New("syntax error")
	// ErrUnknownArg: an unknown argument inside --ros-args.
	ErrUnknownArg = errors.New("unknown ROS argument")
)

// LoggerLevel is a --log-level name:=level setting.
type LoggerLevel struct{ Logger, Level string }

// Args are the ROS arguments of a process, as rcl_parse_arguments reads
// them.
type Args struct {
	Params     []params.Rule   // -p/--param, in order
	ParamFiles []string        // --params-file, in order
	Remaps     []rosname.Remap // -r/--remap, in order (the first match wins)
	// LogLevel is the default --log-level ("" if not given), lower case:
	// unset, debug, info, warn, error or fatal.
	LogLevel      string
	LoggerLevels  []LoggerLevel // --log-level logger:=level
	LogConfigFile string        // --log-config-file
	Enclave       string        // -e/--enclave
	// RosoutLogs, StdoutLogs and ExternalLibLogs are set by
	// --enable-/--disable-{rosout,stdout,external-lib}-logs; nil if not
	// given (rcl's default: enabled).
	RosoutLogs, StdoutLogs, ExternalLibLogs *bool
	// Other are the arguments outside --ros-args ... [--], for the program.
	Other []string
	// Warnings are notes to log: deprecated remap rules outside --ros-args.
	Warnings []string
}

// ArgError is a malformed or unknown ROS argument. It unwraps to ErrSyntax
// (bad rule) or ErrUnknownArg.
type ArgError struct {
	Index int    // position in the argument list
	Arg   string // the flag
	Msg   string
	Err   error
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("argument %d %q: %s", e.Index, e.Arg, e.Msg)
}

func (e *ArgError) Unwrap() error { return e.Err }

// ParseArgs parses a process's arguments (without the program name) as
// rcl_parse_arguments does. ROS arguments sit between --ros-args and an
// optional "--" (several such sections may appear); inside them:
//
//	-p, --param [node:]name:=value      a parameter override (value in YAML)
//	--params-file FILE                  a YAML parameter file
//	-r, --remap [node:]from:=to         a remap rule (also __ns:=, __node:=, __name:=)
//	--log-level [logger:=]level         the log level
//	--log-config-file FILE
//	-e, --enclave ENCLAVE
//	--enable-rosout-logs, --disable-rosout-logs (and stdout-logs, external-lib-logs)
//
// An unknown argument inside --ros-args is an error (rclcpp refuses to
// start), listing every unknown one. Outside --ros-args, "from:=to" is a
// deprecated remap rule (noted in Warnings) and everything else goes to
// Other. Parameter files are only named here: read them and call
// params.LoadOverrides.
func ParseArgs(argv []string) (*Args, error) {
	a := &Args{}
	inROS := false
	var unknown []string
	firstUnknown := -1
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		switch {
		case arg == "--ros-args":
			inROS = true
		case !inROS:
			a.addOther(arg)
		case arg == "--":
			inROS = false
		default:
			what, take, ok := valueFlag(arg)
			if !ok {
				if !a.parseToggle(arg) {
					if firstUnknown < 0 {
						firstUnknown = i
					}
					unknown = append(unknown, "'"+arg+"'")
				}
				continue
			}
			if i+1 >= len(argv) {
				return nil, &ArgError{Index: i, Arg: arg, Msg: "no " + what + " after it", Err: ErrSyntax}
			}
			i++
			if err := take(a, argv[i]); err != nil {
				return nil, &ArgError{Index: i - 1, Arg: arg, Msg: fmt.Sprintf("couldn't parse %q: %v", argv[i], err), Err: errors.Join(ErrSyntax, err)}
			}
		}
	}
	if len(unknown) > 0 {
		return nil, &ArgError{Index: firstUnknown, Arg: argv[firstUnknown],
			Msg: "found unknown ROS arguments: " + strings.Join(unknown, ", "), Err: ErrUnknownArg}
	}
	return a, nil
}

// addOther takes an argument outside --ros-args: a deprecated remap rule
// (from:=to, with a warning), or one for the program (Other).
func (a *Args) addOther(arg string) {
	if r, err := parseRemap(arg); err == nil {
		a.Remaps = append(a.Remaps, r)
		a.Warnings = append(a.Warnings, fmt.Sprintf(
			"found remap rule '%s'. This syntax is deprecated. Use '--ros-args --remap %s' instead.", arg, arg))
		return
	}
	a.Other = append(a.Other, arg)
}

// valueFlag returns, for a ROS argument that takes the next argument as
// its value, what that value is (for the error when it is missing) and
// the function that takes it into the Args; ok is false for any other
// argument.
func valueFlag(arg string) (what string, take func(a *Args, v string) error, ok bool) {
	switch arg {
	case "-p", "--param":
		return "parameter override rule", (*Args).addParam, true
	case "-r", "--remap":
		return "remap rule", (*Args).addRemap, true
	case "--params-file":
		return "file path", func(a *Args, v string) error { a.ParamFiles = append(a.ParamFiles, v); return nil }, true
	case "--log-level":
		return "log level", (*Args).parseLogLevel, true
	case "--log-config-file":
		return "file path", func(a *Args, v string) error { a.LogConfigFile = v; return nil }, true
	case "-e", "--enclave":
		return "enclave", func(a *Args, v string) error { a.Enclave = v; return nil }, true
	}
	return "", nil, false
}

func (a *Args) addParam(v string) error {
	rule, err := parseParamRule(v)
	if err == nil {
		a.Params = append(a.Params, rule)
	}
	return err
}

func (a *Args) addRemap(v string) error {
	rule, err := parseRemap(v)
	if err == nil {
		a.Remaps = append(a.Remaps, rule)
	}
	return err
}

func (a *Args) parseToggle(arg string) bool {
	var enable bool
	var rest string
	switch {
	case strings.HasPrefix(arg, "--enable-"):
		enable, rest = true, arg[len("--enable-"):]
	case strings.HasPrefix(arg, "--disable-"):
		rest = arg[len("--disable-"):]
	default:
		return false
	}
	var p **bool
	switch rest {
	case "rosout-logs":
		p = &a.RosoutLogs
	case "stdout-logs":
		p = &a.StdoutLogs
	case "external-lib-logs":
		p = &a.ExternalLibLogs
	default:
		return false
	}
	*p = &enable
	return true
}

var logLevels = []string{"unset", "debug", "info", "warn", "error", "fatal"}

func (a *Args) parseLogLevel(v string) error {
	level := func(s string) (string, error) {
		l := strings.ToLower(s)
		for _, x := range logLevels {
			if l == x {
				return l, nil
			}
		}
		return "", fmt.Errorf("%q is not a valid severity level (want one of %s)", s, strings.Join(logLevels, ", "))
	}
	if i := strings.Index(v, ":="); i >= 0 {
		if i == 0 {
			return errors.New("empty logger name")
		}
		l, err := level(v[i+2:])
		if err != nil {
			return err
		}
		a.LoggerLevels = append(a.LoggerLevels, LoggerLevel{Logger: v[:i], Level: l})
		return nil
	}
	l, err := level(v)
	if err != nil {
		return err
	}
	a.LogLevel = l
	return nil
}

// lexToken returns the end of the rcl lexer's TOKEN starting at s[i]
// (letters, digits and single underscores, not starting with a digit nor
// with "__"), or -1 if none starts there.
func lexToken(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	c := s[i]
	switch {
	case ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
		i++
	case c == '_':
		if i+1 < len(s) && s[i+1] == '_' {
			return -1 // "__" starts __ns/__node/__name or nothing
		}
		i++
	default:
		return -1
	}
	for i < len(s) {
		c := s[i]
		if isAlnum(c) {
			i++
			continue
		}
		if c == '_' && (i+1 >= len(s) || s[i+1] != '_') {
			i++
			continue
		}
		if c == '_' { // "x__": the token ends after the first '_'
			return i + 1
		}
		break
	}
	return i
}

func isAlnum(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// isToken reports whether s is exactly one TOKEN.
func isToken(s string) bool { return s != "" && lexToken(s, 0) == len(s) }

// nodePrefix splits "node:rest" (a TOKEN and a ':' that is not ":=").
func nodePrefix(s string) (node, rest string) {
	if strings.HasPrefix(s, "rostopic://") || strings.HasPrefix(s, "rosservice://") {
		return "", s
	}
	end := lexToken(s, 0)
	if end > 0 && end < len(s) && s[end] == ':' && (end+1 >= len(s) || s[end+1] != '=') {
		return s[:end], s[end+1:]
	}
	return "", s
}

// checkNamePath checks [~/|/]TOKEN(/TOKEN)*.
func checkNamePath(s, what string) error {
	body := s
	switch {
	case strings.HasPrefix(body, "~/"):
		body = body[2:]
	case strings.HasPrefix(body, "/"):
		body = body[1:]
	}
	for _, seg := range strings.Split(body, "/") {
		switch {
		case seg == "*" || seg == "**":
			return fmt.Errorf("wildcard '%s' is not implemented", seg)
		case len(seg) == 2 && seg[0] == '\\' && seg[1] >= '1' && seg[1] <= '9':
			return errors.New("backreferences are not implemented")
		case !isToken(seg):
			return fmt.Errorf("%s %q: %q is not a valid name token", what, s, seg)
		}
	}
	return nil
}

// parseRemap parses [node:](rostopic://|rosservice://)?from:=to,
// [node:]__ns:=/ns and [node:]__node:=name (or __name).
func parseRemap(s string) (rosname.Remap, error) {
	var r rosname.Remap
	r.Node, s = nodePrefix(s)
	switch {
	case strings.HasPrefix(s, "__node:=") || strings.HasPrefix(s, "__name:="):
		r.Kind, r.Replacement = rosname.RemapNodeName, s[len("__node:="):]
		if !isToken(r.Replacement) {
			return rosname.Remap{}, fmt.Errorf("node name not remapped to invalid name: %q", r.Replacement)
		}
		return r, nil
	case strings.HasPrefix(s, "__ns:="):
		r.Kind, r.Replacement = rosname.RemapNamespace, s[len("__ns:="):]
		if err := rosname.ValidateNamespace(r.Replacement); err != nil {
			return rosname.Remap{}, fmt.Errorf("namespace not remapped to a fully qualified name: %w", err)
		}
		return r, nil
	case strings.HasPrefix(s, "rostopic://"):
		r.Kind, s = rosname.RemapTopic, s[len("rostopic://"):]
	case strings.HasPrefix(s, "rosservice://"):
		r.Kind, s = rosname.RemapService, s[len("rosservice://"):]
	}
	i := strings.Index(s, ":=")
	if i < 0 {
		return rosname.Remap{}, errors.New("a remap rule needs ':='")
	}
	r.Match, r.Replacement = s[:i], s[i+2:]
	if err := checkNamePath(r.Match, "match"); err != nil {
		return rosname.Remap{}, err
	}
	if err := checkNamePath(r.Replacement, "replacement"); err != nil {
		return rosname.Remap{}, err
	}
	return r, nil
}

// parseParamRule parses [node:]name:=value; the name is tokens and '/'
// joined by '.', the value is YAML.
func parseParamRule(s string) (params.Rule, error) {
	var r params.Rule
	r.Node, s = nodePrefix(s)
	i := strings.Index(s, ":=")
	if i < 0 {
		return params.Rule{}, errors.New("a parameter rule needs ':='")
	}
	r.Name = s[:i]
	if err := checkParamName(r.Name); err != nil {
		return params.Rule{}, err
	}
	v, err := params.ParseValue(s[i+2:])
	if err != nil {
		return params.Rule{}, fmt.Errorf("parameter %q: %w", r.Name, err)
	}
	r.Value = v
	return r, nil
}

// checkParamName accepts what rcl's parameter rule lexer accepts: parts
// joined by '.', each a run of TOKENs and '/'.
func checkParamName(name string) error {
	if name == "" {
		return errors.New("empty parameter name")
	}
	for _, part := range strings.Split(name, ".") {
		if part == "" {
			return fmt.Errorf("parameter name %q has an empty part", name)
		}
		for i := 0; i < len(part); {
			if part[i] == '/' {
				i++
				continue
			}
			end := lexToken(part, i)
			if end < 0 {
				if part[i] == '*' {
					return errors.New("wildcards are not implemented in parameter names")
				}
				return fmt.Errorf("parameter name %q: unexpected %q at %d", name, part[i:i+1], i)
			}
			i = end
		}
	}
	return nil
}
