package msgdef

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitType(t *testing.T) {
	for _, tc := range []struct {
		typ, pkg, name string
		ok             bool
	}{
		{"sensor_msgs/msg/Imu", "sensor_msgs", "Imu", true},
		{"sensor_msgs/Imu", "sensor_msgs", "Imu", true},
		{"sensor_msgs/srv/Imu", "", "", false},
		{"no_slash", "", "", false},
		{"/msg/Imu", "", "", false},
		{"sensor_msgs/msg/", "", "", false},
		{"sensor_msgs/", "", "", false},
		{"a/b/c/d", "", "", false},
		{"", "", "", false},
	} {
		pkg, name, ok := SplitType(tc.typ)
		require.Equal(t, []any{tc.pkg, tc.name, tc.ok}, []any{pkg, name, ok}, tc.typ)
	}
}

func TestFiles(t *testing.T) {
	got := slices.Collect(Files([]string{"", "/opt/ws/install", "", "/opt/ros/jazzy"}, "sensor_msgs", "Imu"))
	require.Equal(t, []string{
		filepath.Join("/opt/ws/install", "share", "sensor_msgs", "msg", "Imu.msg"),
		filepath.Join("/opt/ros/jazzy", "share", "sensor_msgs", "msg", "Imu.msg"),
	}, got, "empty prefixes are skipped, the order kept")
	for f := range Files([]string{"/a", "/b"}, "p", "T") {
		require.Equal(t, filepath.Join("/a", "share", "p", "msg", "T.msg"), f)
		break // a caller that stops at the first file
	}
	require.Empty(t, slices.Collect(Files(nil, "p", "T")))
}

// fieldCases drive TestParseField and FuzzParseField's seeds.
var fieldCases = []struct {
	line string
	want Field
	ok   bool
}{
	{"std_msgs/Header header", Field{"std_msgs/Header", "header"}, true},
	{"  float64[9]   orientation_covariance  # row major", Field{"float64[9]", "orientation_covariance"}, true},
	{"string<=10 name", Field{"string<=10", "name"}, true},
	{"int32[<=5] values", Field{"int32[<=5]", "values"}, true},
	{"uint8 level 0", Field{"uint8", "level"}, true}, // a default value
	{"byte OK=0", Field{}, false},
	{"byte WARN = 1", Field{}, false},
	{"string NAME= \"x\"", Field{}, false},
	{"# std_msgs/Header header", Field{}, false},
	{"", Field{}, false},
	{"   \t", Field{}, false},
	{"lonely", Field{}, false},
	{"std_msgs/Header header\r\n", Field{"std_msgs/Header", "header"}, true},
}

func TestParseField(t *testing.T) {
	for _, tc := range fieldCases {
		f, ok := ParseField(tc.line)
		require.Equal(t, tc.ok, ok, "%q", tc.line)
		require.Equal(t, tc.want, f, "%q", tc.line)
	}
	require.Equal(t, "std_msgs/Header header", Field{"std_msgs/Header", "header"}.String())
}

func TestFields(t *testing.T) {
	text := "# IMU\nbyte OK=0\nstd_msgs/Header header # stamp\n\ngeometry_msgs/Quaternion orientation\nstring<=8 frame"
	require.Equal(t, []Field{
		{"std_msgs/Header", "header"},
		{"geometry_msgs/Quaternion", "orientation"},
		{"string<=8", "frame"},
	}, Fields(text))
	require.Empty(t, Fields("# nothing\n"))
}

func TestHeaderFirst(t *testing.T) {
	for _, tc := range []struct {
		text  string
		first Field
		ok    bool
	}{
		{"# An IMU\n#\n\nstd_msgs/Header header # acquisition\nfloat64 x\n", Field{"std_msgs/Header", "header"}, true},
		{"std_msgs/msg/Header header\n", Field{"std_msgs/msg/Header", "header"}, true},
		{"Header header\nfloat32[] ranges\n", Field{"Header", "header"}, true},
		{"uint8 A=1\nstd_msgs/Header header\n", Field{"std_msgs/Header", "header"}, true},
		{"int32 a\nstd_msgs/Header header\n", Field{"int32", "a"}, false},
		{"std_msgs/Header[] headers\n", Field{"std_msgs/Header[]", "headers"}, false},
		{"string<=10 frame\nstd_msgs/Header header\n", Field{"string<=10", "frame"}, false},
		{"my_msgs/Header header\n", Field{"my_msgs/Header", "header"}, false},
		{"# nothing\n", Field{}, false},
		{"", Field{}, false},
	} {
		first, ok := HeaderFirst(tc.text)
		require.Equal(t, tc.ok, ok, "%q", tc.text)
		require.Equal(t, tc.first, first, "%q", tc.text)
		fields := Fields(tc.text)
		if len(fields) > 0 {
			require.Equal(t, fields[0], first, "the first of Fields")
		}
	}
}

// FuzzParseField: any line parses without panic, a field's type and name
// are non-empty words without '#', and a line declares the field its
// declaration does.
func FuzzParseField(f *testing.F) {
	for _, tc := range fieldCases {
		f.Add(tc.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fl, ok := ParseField(line)
		if !ok {
			require.Zero(t, fl)
			return
		}
		require.NotEmpty(t, fl.Type)
		require.NotEmpty(t, fl.Name)
		require.NotContains(t, fl.String(), "#")
		again, ok := ParseField(fl.String())
		require.True(t, ok)
		require.Equal(t, fl, again)
	})
}
