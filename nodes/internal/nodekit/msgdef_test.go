package nodekit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckHeaderFirst(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	write := func(prefix, pkg, name, def string) {
		dir := filepath.Join(prefix, "share", pkg, "msg")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".msg"), []byte(def), 0o644))
	}
	write(first, "sensor_msgs", "Imu", "# This is a message to hold data from an IMU\n#\n\nstd_msgs/Header header # stamp: acquisition\n\ngeometry_msgs/Quaternion orientation\n")
	write(first, "std_msgs", "String", "# a string\nstring data\n")
	write(first, "std_msgs", "Empty", "# nothing\n")
	write(second, "diagnostic_msgs", "DiagnosticStatus", "byte OK=0\nbyte WARN = 1\nbyte level\nstring name\n")
	write(second, "legacy_msgs", "Scan", "Header header\nfloat32[] ranges\n")
	write(second, "my_msgs", "Stamped", "std_msgs/Header[] headers\n")
	write(second, "sensor_msgs", "Imu", "string shadowed # the first prefix wins\n")
	prefixes := []string{"", first, second}
	for _, tc := range []struct {
		typ, err string
		found    bool
	}{
		{"sensor_msgs/msg/Imu", "", true},
		{"sensor_msgs/Imu", "", true},
		{"legacy_msgs/msg/Scan", "", true},
		{"std_msgs/msg/String", `its first field is "string data"`, true},
		{"std_msgs/msg/Empty", "it has no fields", true},
		{"diagnostic_msgs/msg/DiagnosticStatus", `its first field is "byte level"`, true},
		{"my_msgs/msg/Stamped", `its first field is "std_msgs/Header[] headers"`, true},
		{"idl_msgs/msg/OnlyIDL", "", false},
		{"no_slash", "want pkg/msg/Type", false},
	} {
		file, err := CheckHeaderFirst(tc.typ, prefixes)
		require.Equal(t, tc.found, file != "", "%s: %s", tc.typ, file)
		if tc.err == "" {
			require.NoError(t, err, tc.typ)
			continue
		}
		require.ErrorContains(t, err, tc.err, tc.typ)
		if tc.found {
			require.ErrorIs(t, err, ErrNoHeader)
			require.ErrorContains(t, err, file)
		}
	}
}
