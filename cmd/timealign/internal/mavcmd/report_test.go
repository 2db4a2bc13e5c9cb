package mavcmd

import (
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// reportClasses returns each topic's class and verdict from the summary
// table of a report page.
func reportClasses(t *testing.T, page string) (classes, verdicts map[string]string) {
	t.Helper()
	classes, verdicts = map[string]string{}, map[string]string{}
	row := regexp.MustCompile(`<tr[^>]*><td><a href="#topic-\d+">([^<]+)</a></td><td[^>]*>([a-z-]+)</td>(?:<td class="n">[^<]*</td>\s*)*(?:<td>([^<]*))?`)
	for _, m := range row.FindAllStringSubmatch(page, -1) {
		name := html.UnescapeString(m[1])
		classes[name], verdicts[name] = m[2], strings.TrimSpace(html.UnescapeString(m[3]))
	}
	require.NotEmpty(t, classes, "a summary table")
	return classes, verdicts
}

// TestMavReportClasses: on the repository's ArduPilot logs, the classifier
// tells the one-off records (format, unit and parameter tables, messages)
// and the batched ones from the periodic streams, and the verdicts of the
// simulated dive keep its clean boot-clock stamps.
func TestMavReportClasses(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "testdata", "mav")
	out := t.TempDir()
	run := func(name string) string {
		rep := filepath.Join(out, name+".html")
		_, errOut, code := runCmd(t, "", "mav", "merge", "--force", filepath.Join(dir, name+".tlog"), filepath.Join(dir, name+".BIN"),
			"--out", filepath.Join(out, name+".mcap"), "--report", rep)
		require.Equal(t, 0, code, errOut)
		b, err := os.ReadFile(rep)
		require.NoError(t, err)
		return string(b)
	}

	classes, _ := reportClasses(t, run("ardusub_small"))
	for name, want := range map[string]string{
		"/bin/FMTU": "one-off", "/bin/UNIT": "one-off", "/bin/MULT": "one-off", "/bin/PARM": "one-off", "/bin/MSG": "one-off",
		"/bin/MODE": "one-off", "/tlog/1/1/STATUSTEXT": "one-off", "/tlog/1/1/HOME_POSITION": "one-off",
		"/tlog/1/1/NAMED_VALUE_FLOAT": "bursty", "/tlog/1/1/PARAM_VALUE": "bursty",
		"/bin/IMU[0]": "periodic", "/bin/ATT": "periodic", "/bin/MAG[1]": "periodic", "/tlog/1/1/ATTITUDE": "periodic",
		"/tlog/1/1/HEARTBEAT": "periodic", "/tlog/1/1/TIMESYNC": "periodic",
	} {
		require.Equal(t, want, classes[name], name)
	}

	page := run("dive")
	classes, verdicts := reportClasses(t, page)
	for name, want := range map[string]string{"/bin/FMTU": "one-off", "/bin/UNIT": "one-off", "/bin/PARM": "one-off",
		"/bin/MSG": "one-off", "/bin/ATT": "periodic", "/tlog/1/1/ATTITUDE": "periodic", "/tlog/1/1/SYSTEM_TIME": "periodic"} {
		require.Equal(t, want, classes[name], name)
	}
	// ATTITUDE's stamps are clean (1.91 µs): keep them; where an estimate
	// is worse than a stamp, the page says where and why.
	require.Equal(t, "keep the stamps", verdicts["/tlog/1/1/ATTITUDE"])
	require.Equal(t, "keep the stamps", verdicts["/tlog/1/1/SYSTEM_TIME"])
	text := html.UnescapeString(page)
	require.Contains(t, text, "keep the stamps: ")
	require.NotContains(t, text, "correct with timestamp_estimator: interval jitter std 1.91µs")
	if strings.Contains(text, "the estimate is worse than the stamp on") {
		require.Regexp(t, `just after a gap|in its warm-up|elsewhere \(`, text)
	}
}
