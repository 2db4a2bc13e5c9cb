package bag

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHeaderFirstFromSchema(t *testing.T) {
	imuIDL := `// generated from rosidl_adapter/resource/msg.idl.em
#include "geometry_msgs/msg/Quaternion.idl"
#include "std_msgs/msg/Header.idl"

module sensor_msgs {
  module msg {
    @verbatim (language="comment", text=
      "This is a message to hold data from an IMU (Inertial Measurement Unit)" "\n"
      "Accelerations should be in m/s^2 (not in g's)")
    struct Imu {
      std_msgs::msg::Header header;

      geometry_msgs::msg::Quaternion orientation;
    };
  };
};
================================================================================
IDL: std_msgs/msg/Header
module std_msgs { module msg { struct Header { builtin_interfaces::msg::Time stamp; string frame_id; }; }; };
`
	strIDL := "module std_msgs { module msg { struct String { string data; }; }; };"
	for _, c := range []struct {
		typ, enc, text string
		want           bool
		err            bool
	}{
		{"sensor_msgs/msg/Imu", "ros2msg", "# comment\n\nstd_msgs/Header header # the header\ngeometry_msgs/Quaternion orientation\n", true, false},
		{"x/msg/Y", "ros2msg", "uint8 A=1\nstd_msgs/msg/Header header\n", true, false},
		{"x/msg/Y", "ros2msg", "int32 a\nstd_msgs/Header header\n", false, false},
		{"x/msg/Y", "ros2msg", "string<=10 frame\nstd_msgs/Header header\n", false, false}, // a bounded string is a field
		{"x/msg/Y", "ros2msg", "string data\n" + msgSeparator + "\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\n", false, false},
		{"std_msgs/msg/String", "ros2msg", "", false, false},
		{"sensor_msgs/msg/Imu", "ros2idl", imuIDL, true, false},
		{"std_msgs/msg/String", "ros2idl", strIDL, false, false},
		{"a/msg/Missing", "ros2idl", strIDL, false, true},
		{"a/msg/B", "protobuf", "x", false, false},
		{"ATT", "jsonschema", "{}", false, false},
		{"a/msg/B", "xyz", "x", false, true},
	} {
		top := &Topic{Type: c.typ, Schema: &Schema{Name: c.typ, Encoding: c.enc, Data: []byte(c.text)}}
		var d Definitions
		def := d.Lookup(top)
		if c.text == "" {
			require.NotEqual(t, FromSchema, def.Source, "an empty schema is no definition")
			continue
		}
		require.Equal(t, FromSchema, def.Source)
		require.Equal(t, c.want, def.HeaderFirst, "%s %s", c.enc, c.text)
		require.Equal(t, c.err, def.Err != nil, "%v", def.Err)
		_, foreign := foreignSchemas[c.enc]
		require.Equal(t, foreign, def.NoHeader != "", "%s: a schema that cannot carry a ROS Header says so", c.enc)
	}
}

func TestDefinitionsInstalledThenBuiltin(t *testing.T) {
	files := map[string]string{
		"/opt/ws/share/my_msgs/msg/Scan.msg":            "std_msgs/Header header\nPoint p\n",
		"/opt/ws/share/my_msgs/msg/Point.msg":           "float64 x\n",
		"/opt/ws/share/std_msgs/msg/Header.msg":         "builtin_interfaces/Time stamp\nstring frame_id\n",
		"/opt/ws/share/builtin_interfaces/msg/Time.msg": "int32 sec\nuint32 nanosec\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[filepath.ToSlash(p)]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	d := Definitions{AmentPrefixPath: []string{"/opt/ws"}, ReadFile: read}
	def := d.LookupType("my_msgs/msg/Scan")
	require.Equal(t, FromInstalled, def.Source)
	require.True(t, def.HeaderFirst)
	text := string(def.Schema.Data)
	require.Contains(t, text, "MSG: my_msgs/Point\nfloat64 x")
	require.Contains(t, text, "MSG: builtin_interfaces/Time")

	// Not installed: the built-in table.
	def = d.LookupType("sensor_msgs/msg/Imu")
	require.Equal(t, FromBuiltin, def.Source)
	require.True(t, def.HeaderFirst)
	for _, dep := range []string{"std_msgs/Header", "builtin_interfaces/Time", "geometry_msgs/Quaternion", "geometry_msgs/Vector3"} {
		require.Contains(t, string(def.Schema.Data), "MSG: "+dep+"\n")
	}
	require.Equal(t, 4, strings.Count(string(def.Schema.Data), msgSeparator))
	require.False(t, d.LookupType("std_msgs/msg/String").HeaderFirst)
	def = d.LookupType("unknown_msgs/msg/Thing")
	require.Equal(t, Unknown, def.Source)
	require.False(t, def.HeaderFirst)

	// A dependency that is missing makes the installed definition unusable.
	delete(files, "/opt/ws/share/my_msgs/msg/Point.msg")
	d2 := Definitions{AmentPrefixPath: []string{"/opt/ws"}, ReadFile: read}
	require.Equal(t, Unknown, d2.LookupType("my_msgs/msg/Scan").Source)
}

// TestBuiltinTable: every built-in type's dependencies are in the table,
// and the sensor types that start with a Header are seen to.
func TestBuiltinTable(t *testing.T) {
	for typ := range builtinDefs {
		_, err := fullText(typ, builtinMsg)
		require.NoError(t, err, typ)
	}
	var d Definitions
	for _, typ := range []string{"sensor_msgs/msg/Imu", "sensor_msgs/msg/LaserScan", "sensor_msgs/msg/Image",
		"sensor_msgs/msg/PointCloud2", "sensor_msgs/msg/NavSatFix", "nav_msgs/msg/Odometry", "geometry_msgs/msg/PoseStamped"} {
		require.True(t, d.LookupType(typ).HeaderFirst, typ)
	}
	for _, typ := range []string{"tf2_msgs/msg/TFMessage", "geometry_msgs/msg/Pose", "std_msgs/msg/String"} {
		require.False(t, d.LookupType(typ).HeaderFirst, typ)
	}
}
