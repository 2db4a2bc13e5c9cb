package bag

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

// rosbag2Bags are bags rosbag2 wrote, kept in testdata/rosbag2 (see its
// README): those of ros2/rosbag2's test resources, and two that
// `ros2 bag record -a` wrote on Humble ("recorded").
var rosbag2Bags = []string{
	"mcap/talker", "mcap/wbag", "mcap/cdr_test",
	"sqlite3/talker", "sqlite3/wbag", "sqlite3/cdr_test", "sqlite3/empty_bag",
	"mcap/recorded", "sqlite3/recorded",
}

func rosbag2Dir(name string) string { return filepath.Join("..", "..", "testdata", "rosbag2", name) }

// readAll reads every message of a bag and counts them per topic.
func readAll(t *testing.T, b *Bag) (counts map[string]uint64, types map[string]string, n int, first, last stamp.Time) {
	t.Helper()
	counts, types = map[string]uint64{}, map[string]string{}
	r := b.Records()
	defer r.Close()
	var rec Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch rec.Kind {
		case KindTopic:
			types[rec.Topic.Name] = rec.Topic.Type
			counts[rec.Topic.Name] += 0
		case KindMessage:
			counts[rec.Message.Topic.Name]++
			if n == 0 || rec.Message.LogTime < first {
				first = rec.Message.LogTime
			}
			if rec.Message.LogTime > last {
				last = rec.Message.LogTime
			}
			n++
		}
	}
	require.False(t, r.Skipped().Any(), "skipped %+v", r.Skipped())
	return counts, types, n, first, last
}

// TestRosbag2Bags reads the bags rosbag2 wrote for its own tests: topics,
// types and counts equal their metadata.yaml, and Summarize agrees.
func TestRosbag2Bags(t *testing.T) {
	for _, name := range rosbag2Bags {
		t.Run(name, func(t *testing.T) {
			b, err := Open(rosbag2Dir(name))
			require.NoError(t, err)
			require.NotNil(t, b.Metadata)
			require.Equal(t, Storage(b.Metadata.StorageIdentifier), b.Storage)
			counts, types, n, first, last := readAll(t, b)
			want := map[string]uint64{}
			wantTypes := map[string]string{}
			for _, ti := range b.Metadata.Topics {
				want[ti.Name] = ti.MessageCount
				wantTypes[ti.Name] = ti.Type
			}
			// Every topic, those without messages too: rosbag2's MCAP
			// writer puts the channel of a topic that got no message
			// in the summary section only.
			require.Equal(t, wantTypes, types)
			for k, v := range counts {
				if v == 0 {
					delete(counts, k)
				}
			}
			for k, v := range want {
				if v == 0 {
					delete(want, k)
				}
			}
			require.Equal(t, want, counts)
			require.Equal(t, b.Metadata.MessageCount, uint64(n))
			if n > 0 && name != "sqlite3/wbag" && name != "mcap/wbag" { // wbag's metadata times are synthetic
				require.Equal(t, b.Metadata.StartingTime, first)
				require.Equal(t, b.Metadata.Duration, last.Sub(first))
			}
			s, err := b.Summarize()
			require.NoError(t, err)
			require.Equal(t, b.Metadata.MessageCount, s.MessageCount)
			sc := map[string]uint64{}
			for _, ts := range s.Topics {
				if ts.Count > 0 {
					sc[ts.Topic.Name] = ts.Count
				}
			}
			require.Equal(t, want, sc)
		})
	}
}

// TestOpenForms opens a bag as a directory, as one of its files, and as a
// directory of split files without metadata.yaml.
func TestOpenForms(t *testing.T) {
	b, err := Open(filepath.Join(rosbag2Dir("mcap/talker"), "talker.mcap"))
	require.NoError(t, err)
	require.Nil(t, b.Metadata)
	require.Equal(t, "talker", b.Name())
	_, _, n, _, _ := readAll(t, b)
	require.Equal(t, 20, n)

	b, err = Open(rosbag2Dir("mcap/multiple_files"))
	require.NoError(t, err)
	require.Len(t, b.Files, 3)
	require.Equal(t, "multiple_files_0.mcap", filepath.Base(b.Files[0]))
	counts, _, _, _, _ := readAll(t, b)
	s, err := b.Summarize()
	require.NoError(t, err)
	require.Len(t, s.Files, 3)
	require.Equal(t, s.MessageCount, counts["/chatter"])
	require.Greater(t, s.Files[0].MessageCount, uint64(0))
	// Split files are read in order: log times never go back across them.
	r := b.Records()
	defer r.Close()
	var rec Record
	var prev stamp.Time
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if rec.Kind == KindMessage {
			require.GreaterOrEqual(t, rec.Message.LogTime, prev, "file %d", rec.File)
			prev = rec.Message.LogTime
		}
	}
}

// TestSplitOrder sorts split files by their index, not as strings.
func TestSplitOrder(t *testing.T) {
	dir := t.TempDir()
	for _, i := range []int{10, 2, 0, 1} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("b_%d.mcap", i)), nil, 0o644))
	}
	files, err := storageFiles(dir)
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	require.Equal(t, []string{"b_0.mcap", "b_1.mcap", "b_2.mcap", "b_10.mcap"}, names)
}
