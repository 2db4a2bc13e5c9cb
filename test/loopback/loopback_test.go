package loopback

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEnv(t *testing.T) {
	for _, distro := range []string{"humble", "jazzy"} {
		dir := t.TempDir()
		env, err := Env(dir, distro)
		require.NoError(t, err)
		vars := map[string]string{}
		for _, kv := range env {
			k, v, ok := strings.Cut(kv, "=")
			require.True(t, ok, kv)
			vars[k] = v
		}
		domain, err := strconv.Atoi(vars["ROS_DOMAIN_ID"])
		require.NoError(t, err)
		require.True(t, domain >= 10 && domain < 210, "domain %d", domain)
		require.Equal(t, "1", vars["ROS_LOCALHOST_ONLY"])
		if distro == "jazzy" {
			require.Equal(t, "LOCALHOST", vars["ROS_AUTOMATIC_DISCOVERY_RANGE"])
			require.Contains(t, vars, "ROS_STATIC_PEERS")
		} else {
			require.NotContains(t, vars, "ROS_AUTOMATIC_DISCOVERY_RANGE")
		}
		cyclone, err := os.ReadFile(strings.TrimPrefix(vars["CYCLONEDDS_URI"], "file://"))
		require.NoError(t, err)
		require.Equal(t, CycloneDDS, string(cyclone))
		fast, err := os.ReadFile(vars["FASTRTPS_DEFAULT_PROFILES_FILE"])
		require.NoError(t, err)
		require.Equal(t, FastDDS, string(fast))
		require.Equal(t, dir, filepath.Dir(vars["FASTRTPS_DEFAULT_PROFILES_FILE"]))
	}
}

// TestConfigsLoopbackOnly: both files are well-formed XML that name
// 127.0.0.1 and no other address, with Cyclone's multicast off.
func TestConfigsLoopbackOnly(t *testing.T) {
	for name, doc := range map[string]string{"cyclone": CycloneDDS, "fastdds": FastDDS} {
		d := xml.NewDecoder(strings.NewReader(doc))
		var addrs []string
		inAddr := false
		for {
			tok, err := d.Token()
			if err != nil {
				require.ErrorIs(t, err, io.EOF, name)
				break
			}
			switch e := tok.(type) {
			case xml.StartElement:
				inAddr = e.Name.Local == "address"
				for _, a := range e.Attr {
					if a.Name.Local == "address" {
						addrs = append(addrs, a.Value)
					}
				}
			case xml.CharData:
				if inAddr && strings.TrimSpace(string(e)) != "" {
					addrs = append(addrs, strings.TrimSpace(string(e)))
				}
			case xml.EndElement:
				inAddr = false
			}
		}
		require.NotEmpty(t, addrs, name)
		for _, a := range addrs {
			require.Equal(t, "127.0.0.1", a, name)
		}
	}
	require.Contains(t, CycloneDDS, "<AllowMulticast>false</AllowMulticast>")
	require.Contains(t, FastDDS, "<useBuiltinTransports>false</useBuiltinTransports>")
}

func TestDiscoveryRange(t *testing.T) {
	for distro, want := range map[string]bool{"": false, "humble": false, "foxy": false, "iron": true, "jazzy": true, "rolling": true} {
		require.Equal(t, want, DiscoveryRange(distro), distro)
	}
}
