package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// repoRoot is the repository's root, seen from this package's directory
// (where go test runs it).
var repoRoot = filepath.Join("..", "..")

// docFiles returns the documentation whose examples the tests run: README.md
// and every docs/*.md, as slash paths relative to the repository's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	files := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(repoRoot, d)
		require.NoError(t, err)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// docExample is a "$ timealign ..." line of a doc file with the output
// shown under it.
type docExample struct {
	file string
	line int
	cmd  string
	want []string
}

func (ex docExample) String() string { return fmt.Sprintf("%s:%d: %s", ex.file, ex.line, ex.cmd) }

// docExamples returns the examples of file in order: in a fenced block,
// each line starting with "$ " is a command, the lines after it its output.
func docExamples(t *testing.T, file string) []docExample {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, filepath.FromSlash(file)))
	require.NoError(t, err)
	defer f.Close()
	var out []docExample
	in, open := false, false // in a fenced block; its last example takes output lines
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			in, open = !in, false
		case in && strings.HasPrefix(line, "$ "):
			out = append(out, docExample{file: file, line: n, cmd: strings.TrimPrefix(line, "$ ")})
			open = true
		case open:
			ex := &out[len(out)-1]
			ex.want = append(ex.want, line)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// TestReadmeExamples runs every "$ timealign ..." example of README.md and
// docs/*.md with bash and requires the output the doc shows: the examples
// work from the repository alone and say what they print. The examples of
// one file run in order in a scratch directory of their own (with the
// repository's testdata beside them), so an example may use what an earlier
// one of its file wrote. A "$ " line is a promise that the line runs: one
// that is not a timealign command fails here.
func TestReadmeExamples(t *testing.T) {
	// The examples show what a machine without ROS 2 prints: with ROS 2
	// sourced (colcon test), message definitions would come from the
	// installed .msg files ("installed") rather than the built-in table.
	t.Setenv("AMENT_PREFIX_PATH", "")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the docs' shell lines")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	wrapper := "#!/bin/sh\nTIMEALIGN_TEST_MAIN=1 exec " + exe + " \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "timealign"), []byte(wrapper), 0o755))
	testdata, err := filepath.Abs(filepath.Join(repoRoot, "testdata"))
	require.NoError(t, err)
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := 0
	for _, file := range docFiles(t) {
		examples := docExamples(t, file)
		for _, ex := range examples {
			require.True(t, strings.HasPrefix(ex.cmd, "timealign "),
				"%v: an example (a \"$ \" line in a fenced block) must be a timealign command the test can run; show other commands without \"$ \"", ex)
		}
		if len(examples) == 0 {
			continue
		}
		run += len(examples)
		t.Run(file, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "work")
			require.NoError(t, os.Mkdir(work, 0o755))
			require.NoError(t, os.Symlink(testdata, filepath.Join(work, "testdata")))
			for _, ex := range examples {
				cmd := exec.Command(bash, "-o", "pipefail", "-c", ex.cmd)
				cmd.Dir = work
				cmd.Env = env
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 141 {
					err = nil // SIGPIPE: head stopped reading
				}
				require.NoError(t, err, "%v\n%s", ex, stderr.String())
				got := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
				if len(ex.want) > 0 {
					require.Equal(t, ex.want, got, "%v", ex)
				}
			}
			t.Logf("%d examples of %s run", len(examples), file)
		})
	}
	require.NotZero(t, run, "no examples found in %v", docFiles(t))
}

// mdLink matches an inline link or image, [text](target) or
// [text](target "title"), and a reference definition, [label]: target.
var mdLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)|^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)

// mdLinkText matches an inline link, whose text alone is a heading's.
var mdLinkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// mdDoc is what the link check reads from a markdown file.
type mdDoc struct {
	anchors map[string]bool
	links   []mdRef
}

// mdRef is a link of a markdown file: its target as written, and the line.
type mdRef struct {
	line   int
	target string
}

// readMarkdown reads the headings (as GitHub makes their anchors) and the
// links of a markdown file, outside fenced code blocks and code spans.
func readMarkdown(t *testing.T, file string) mdDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(file)))
	require.NoError(t, err)
	doc := mdDoc{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := ""
	for n, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		line = stripCodeSpans(line)
		if h := strings.TrimLeft(line, "#"); len(h) < len(line) && len(line)-len(h) <= 6 && strings.HasPrefix(h, " ") {
			slug := headingSlug(h)
			if k := seen[slug]; k > 0 {
				doc.anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				doc.anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1] + m[2]
			doc.links = append(doc.links, mdRef{line: n + 1, target: target})
		}
	}
	return doc
}

// stripCodeSpans removes the markup of the code spans of a line (text
// between equal runs of backticks), which hold no links.
func stripCodeSpans(line string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(line, '`')
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		n := len(line[i:]) - len(strings.TrimLeft(line[i:], "`"))
		end := strings.Index(line[i+n:], strings.Repeat("`", n))
		if end < 0 {
			b.WriteString(line)
			return b.String()
		}
		// The span's text stays (a heading's anchor is made from it);
		// its characters cannot start a link.
		b.WriteString(line[:i])
		b.WriteString(strings.NewReplacer("[", "", "]", "", "(", "", ")", "").Replace(line[i+n : i+n+end]))
		line = line[i+n+end+n:]
	}
}

// headingSlug is the anchor GitHub gives a heading: its text in lower
// case, without markup and punctuation, spaces made hyphens.
func headingSlug(h string) string {
	h = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#"))
	h = mdLinkText.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownFiles returns every markdown file of the repository (outside
// hidden directories, node_modules and colcon's directories), as slash
// paths from its root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			// colcon's build, install and log directories, in a
			// workspace built inside the repository.
			if _, err := os.Stat(filepath.Join(p, "COLCON_IGNORE")); err == nil {
				return filepath.SkipDir
			}
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// TestDocLinks requires every relative link of the repository's markdown
// (README.md, docs/, CONTRIBUTING.md, the testdata READMEs) to name a file
// or directory that exists, and its #anchor, in a markdown file, to be one
// of that file's headings.
func TestDocLinks(t *testing.T) {
	files := markdownFiles(t)
	require.Contains(t, files, "README.md")
	docs := map[string]mdDoc{}
	for _, f := range files {
		docs[f] = readMarkdown(t, f)
	}
	checked := 0
	for _, f := range files {
		for _, l := range docs[f].links {
			if l.target == "" || strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			where := fmt.Sprintf("%s:%d: link %s", f, l.line, l.target)
			target, anchor, _ := strings.Cut(l.target, "#")
			dest := f // a bare #anchor is in the file itself
			if target != "" {
				if strings.HasPrefix(target, "/") {
					dest = path.Clean(strings.TrimPrefix(target, "/"))
				} else {
					dest = path.Join(path.Dir(f), target)
				}
			}
			checked++
			_, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(dest)))
			if !strings.HasPrefix(dest, "../") && err == nil {
				if anchor != "" && strings.HasSuffix(dest, ".md") {
					d, ok := docs[dest]
					if !ok {
						d = readMarkdown(t, dest)
					}
					if !d.anchors[anchor] {
						t.Errorf("%s: %s has no heading with the anchor #%s", where, dest, anchor)
					}
				}
				continue
			}
			t.Errorf("%s: %s does not exist in the repository", where, dest)
		}
	}
	require.NotZero(t, checked)
	t.Logf("%d relative links checked in %d markdown files", checked, len(files))
}

// docCommand is a timealign command line of a doc, in a fenced block: a
// synopsis (with its continuation lines) or an example.
type docCommand struct {
	file  string
	line  int
	words []string // the lower-case words after "timealign": command, subcommand, ...
	flags []string
}

var (
	docFlag = regexp.MustCompile(`(?:^|[\s\[|])(--[a-z][a-z0-9-]*)`)
	docWord = regexp.MustCompile(`^[a-z]+$`)
)

// docCommands returns the timealign command lines of file's fenced blocks.
// A line continues the command above it when it is indented and starts
// with "[" or "--" (a synopsis wrapped); a shell line ends the command at
// its first " | ", " && " or ";".
func docCommands(t *testing.T, file string) []docCommand {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(file)))
	require.NoError(t, err)
	var out []docCommand
	in, open := false, false
	for n, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			in, open = !in, false
			continue
		}
		if !in {
			continue
		}
		text := strings.TrimPrefix(line, "$ ")
		for _, end := range []string{" | ", " && ", ";"} {
			if i := strings.Index(text, end); i >= 0 {
				text = text[:i]
			}
		}
		trimmed := strings.TrimSpace(text)
		switch {
		case strings.HasPrefix(text, "timealign "):
			c := docCommand{file: file, line: n + 1}
			for _, w := range strings.Fields(text)[1:] {
				if !docWord.MatchString(w) {
					break
				}
				c.words = append(c.words, w)
			}
			out, open = append(out, c), true
		case open && trimmed != text && (strings.HasPrefix(trimmed, "[") || strings.HasPrefix(trimmed, "--")):
		default:
			open = false
			continue
		}
		c := &out[len(out)-1]
		for _, m := range docFlag.FindAllStringSubmatch(text, -1) {
			c.flags = append(c.flags, m[1])
		}
	}
	return out
}

// TestDocFlags requires every --flag that a timealign command line of
// README.md or docs/*.md names (a synopsis or an example) to be one that the
// command's --help lists: the docs name no flag that was renamed or
// removed.
func TestDocFlags(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	helps := map[string]string{}
	help := func(args ...string) string {
		key := strings.Join(args, " ")
		if h, ok := helps[key]; ok {
			return h
		}
		cmd := exec.Command(exe, append(slices.Clone(args), "--help")...)
		cmd.Env = append(os.Environ(), "TIMEALIGN_TEST_MAIN=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "timealign %s --help\n%s", key, out)
		helps[key] = string(out)
		return helps[key]
	}
	lists := func(h, name string) bool { // an indented line of h starts with name
		for _, l := range strings.Split(h, "\n") {
			if f := strings.Fields(l); len(f) > 0 && l != strings.TrimLeft(l, " ") && f[0] == name {
				return true
			}
		}
		return false
	}
	checked := 0
	for _, file := range docFiles(t) {
		for _, c := range docCommands(t, file) {
			if len(c.flags) == 0 || len(c.words) == 0 {
				continue
			}
			where := fmt.Sprintf("%s:%d: timealign %s", c.file, c.line, strings.Join(c.words, " "))
			require.True(t, lists(help(), c.words[0]), "%s: timealign help lists no command %s", where, c.words[0])
			args := c.words[:1]
			if h := help(args...); len(c.words) > 1 && strings.Contains(h, "Subcommands:") {
				require.True(t, lists(h, c.words[1]), "%s: timealign %s --help lists no subcommand %s", where, c.words[0], c.words[1])
				args = c.words[:2]
			}
			h := help(args...)
			for _, f := range c.flags {
				checked++
				if f != "--help" && !lists(h, f) {
					t.Errorf("%s: %s is not a flag of timealign %s (its --help lists none)", where, f, strings.Join(args, " "))
				}
			}
		}
	}
	require.NotZero(t, checked)
	t.Logf("%d flags of %d commands checked", checked, len(helps))
}
