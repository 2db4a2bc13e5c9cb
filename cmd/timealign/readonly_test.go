package main

import (
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"

	"github.com/timealign/timealign/cmd/timealign/internal/clitest"
)

// snapshot lists every file and directory under root with its mode, size,
// mtime and (for files) the SHA-256 of its contents, one line each.
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		line := fmt.Sprintf("%s %v %d %d", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			line += " " + hex.EncodeToString(h.Sum(nil))
		}
		lines = append(lines, line)
		return nil
	})
	require.NoError(t, err)
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// ageTree sets the mtime of everything under root an hour back, so that a
// write during the test shows as a changed mtime even on a coarse clock.
func ageTree(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	var paths []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		paths = append(paths, path)
		return err
	}))
	// Deepest first: touching a file does not change its directory's
	// mtime, but keep the order honest anyway.
	for i := len(paths) - 1; i >= 0; i-- {
		require.NoError(t, os.Chtimes(paths[i], old, old))
	}
}

// walBag writes a rosbag2 SQLite bag with header-stamped topics whose
// file is in WAL mode (as rosbag2's resilient preset and some recorders
// leave it), without its -wal and -shm.
func walBag(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "walbag")
	_, errOut, code := runCmd(t, "", "simulate", "--bag", path, "--storage", "sqlite3", "--streams", "imu,camera", "--duration", "2s")
	require.Equal(t, 0, code, errOut)
	db := filepath.Join(path, "walbag_0.db3")
	conn, err := (&sqlite.Driver{}).Open(db)
	require.NoError(t, err)
	_, err = conn.(driver.Execer).Exec("PRAGMA journal_mode=WAL", nil) //nolint:staticcheck
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	head := make([]byte, 20)
	f, err := os.Open(db)
	require.NoError(t, err)
	_, err = io.ReadFull(f, head)
	f.Close()
	require.NoError(t, err)
	require.Equal(t, []byte{2, 2}, head[18:20], "the file is in WAL mode")
	require.NoFileExists(t, db+"-wal")
	require.NoFileExists(t, db+"-shm")
	return path
}

// readingCommands are the commands that read a bag: none may change it.
func readingCommands(bagPath, out string, fix []string) [][]string {
	return [][]string{
		{"bag", "info", bagPath},
		{"bag", "info", "--json", bagPath},
		{"bag", "cat", "--out", filepath.Join(out, "cat.csv"), bagPath},
		{"bag", "report", "--quiet", "--html", filepath.Join(out, "r.html"), "--json", filepath.Join(out, "r.json"), bagPath},
		append([]string{"bag", "fix", "--quiet", bagPath, filepath.Join(out, "fixed")}, fix...),
	}
}

// TestReadingNeverWrites: bag info, bag report, bag fix (its input) and
// mav leave every input file and directory as they were (names, sizes,
// contents, mtimes): on a WAL-mode .db3 without its -wal, on a killed
// recording's .db3 with its -wal and -shm, on MCAP, on ArduPilot logs, and
// in a read-only directory.
func TestReadingNeverWrites(t *testing.T) {
	tmp := t.TempDir()
	killed := filepath.Join(tmp, "killed_wal")
	require.NoError(t, os.CopyFS(killed, os.DirFS(filepath.Join("..", "..", "testdata", "rosbag2", "sqlite3", "killed_wal"))))
	talker := filepath.Join(tmp, "talker")
	require.NoError(t, os.CopyFS(talker, os.DirFS(filepath.Join("..", "..", "testdata", "rosbag2", "sqlite3", "talker"))))
	recorded := filepath.Join(tmp, "recorded")
	require.NoError(t, os.CopyFS(recorded, os.DirFS(filepath.Join("..", "..", "testdata", "rosbag2", "sqlite3", "recorded"))))
	killedRollback := filepath.Join(tmp, "killed")
	require.NoError(t, os.CopyFS(killedRollback, os.DirFS(filepath.Join("..", "..", "testdata", "rosbag2", "sqlite3", "killed"))))
	mcapBag := filepath.Join(tmp, "mcap_recorded")
	require.NoError(t, os.CopyFS(mcapBag, os.DirFS(filepath.Join("..", "..", "testdata", "rosbag2", "mcap", "recorded"))))
	mav := filepath.Join(tmp, "mav")
	require.NoError(t, os.MkdirAll(mav, 0o755))
	for _, n := range []string{"dive.tlog", "dive.BIN"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mav", n))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(mav, n), data, 0o644))
	}
	wal := walBag(t, tmp)

	type tcase struct {
		name string
		dir  string // the input directory whose snapshot must not change
		cmds func(out string) [][]string
	}
	imuFix := []string{"--apply", "/imu=timestamp_estimator"}
	cases := []tcase{
		{"WAL-mode db3 without its -wal", wal, func(out string) [][]string {
			return append(readingCommands(wal, out, []string{"--apply", "/imu/data_raw=timestamp_estimator"}),
				[]string{"bag", "info", filepath.Join(wal, "walbag_0.db3")})
		}},
		{"rosbag2 talker (WAL mode)", talker, func(out string) [][]string {
			return readingCommands(talker, out, nil)[:4] // no topic of talker has a Header to fix
		}},
		{"killed recording with -wal and -shm", killed, func(out string) [][]string {
			return readingCommands(killed, out, imuFix)
		}},
		{"rollback-mode db3", recorded, func(out string) [][]string { return readingCommands(recorded, out, imuFix) }},
		{"killed rollback-mode recording", killedRollback, func(out string) [][]string {
			return readingCommands(killedRollback, out, imuFix)
		}},
		{"MCAP", mcapBag, func(out string) [][]string { return readingCommands(mcapBag, out, imuFix) }},
		{"mav", mav, func(out string) [][]string {
			tlog, bin := filepath.Join(mav, "dive.tlog"), filepath.Join(mav, "dive.BIN")
			return [][]string{
				{"mav", "align", tlog, bin},
				{"mav", "align", "--json", "--report", filepath.Join(out, "a.html"), tlog, bin},
				{"mav", "merge", "--out", filepath.Join(out, "m.mcap"), "--report", filepath.Join(out, "m.html"), tlog, bin},
				{"mav", "merge", "--out", filepath.Join(out, "m.csv"), tlog, bin},
			}
		}},
	}
	run := func(t *testing.T, tc tcase, readOnly bool) {
		if readOnly {
			require.NoError(t, filepath.WalkDir(tc.dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() {
					return os.Chmod(path, 0o555)
				}
				return os.Chmod(path, 0o444)
			}))
			t.Cleanup(func() {
				filepath.WalkDir(tc.dir, func(path string, d fs.DirEntry, err error) error {
					if err == nil && d.IsDir() {
						os.Chmod(path, 0o755)
					}
					return nil
				})
			})
		}
		ageTree(t, tc.dir)
		before := snapshot(t, tc.dir)
		for i, args := range tc.cmds(t.TempDir()) {
			_, errOut, code := runCmd(t, "", args...)
			require.Equal(t, 0, code, "%v: %s", args, errOut)
			require.Equal(t, before, snapshot(t, tc.dir), "after %v (command %d)", args, i)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc, false) })
	}
	for _, tc := range cases {
		t.Run("read-only/"+tc.name, func(t *testing.T) { run(t, tc, true) })
	}
}

// TestReadingReadOnlyAsAnotherUser runs the reading commands as a process
// of an unprivileged user on a read-only directory, where the kernel
// refuses any write (chmod does not restrict root, who runs the tests).
func TestReadingReadOnlyAsAnotherUser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to start a process as another user")
	}
	const nobody = 65534
	// The test binary, the bags and the output directory where the user
	// can reach them.
	base, err := os.MkdirTemp("", "timealign-ro-*")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	exe, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(exe)
	require.NoError(t, err)
	bin := filepath.Join(base, "timealign.test")
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	out := filepath.Join(base, "out")
	require.NoError(t, os.Mkdir(out, 0o777))
	require.NoError(t, os.Chmod(out, 0o777))
	in := filepath.Join(base, "in")
	require.NoError(t, os.Mkdir(in, 0o755))
	killed := filepath.Join(in, "killed_wal")
	require.NoError(t, os.CopyFS(killed, os.DirFS(filepath.Join("..", "..", "testdata", "rosbag2", "sqlite3", "killed_wal"))))
	wal := walBag(t, in)
	for _, root := range []string{killed, wal} {
		require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return os.Chmod(path, 0o555)
			}
			return os.Chmod(path, 0o444)
		}))
		defer os.Chmod(root, 0o755)
	}
	ageTree(t, in)
	before := snapshot(t, in)
	for i, args := range append(
		readingCommands(wal, out, []string{"--apply", "/imu/data_raw=timestamp_estimator"}),
		readingCommands(killed, filepath.Join(out, "k"), []string{"--apply", "/imu=timestamp_estimator"})...) {
		if i == 3 {
			require.NoError(t, os.Mkdir(filepath.Join(out, "k"), 0o777))
			require.NoError(t, os.Chmod(filepath.Join(out, "k"), 0o777))
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "TIMEALIGN_TEST_MAIN=1", "TMPDIR="+out, "HOME="+out)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, b)
		require.Equal(t, before, snapshot(t, in), "after %v", args)
		for _, name := range clitest.DirFiles(t, out) {
			require.False(t, strings.HasPrefix(name, "timealign-"), "%s left in TMPDIR after %v", name, args)
		}
	}
}
