package csvio

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timealign/timealign/pkg/stamp"
)

var pllCols = Columns{Required: []string{"receive_ns", "ticks"}, Optional: []string{"scan_ticks"}}

// readCases feeds the reader tests and the fuzz seeds.
var readCases = []struct {
	name   string
	in     string
	cols   Columns
	rows   int    // rows read before the error (or EOF)
	errIs  error  // nil: io.EOF at the end
	errMsg string // substring of the error message
}{
	{"ok", "receive_ns,ticks\n1,2\n3,4\n", pllCols, 2, nil, ""},
	{"optional column", "receive_ns,ticks,scan_ticks\n1,2,3\n", pllCols, 1, nil, ""},
	{"crlf and blank lines", "receive_ns,ticks\r\n1,2\r\n\r\n3,4\r\n", pllCols, 2, nil, ""},
	{"empty", "", pllCols, 0, ErrEmpty, "in.csv: empty input"},
	{"header only", "receive_ns,ticks\n", pllCols, 0, nil, ""},
	{"wrong header", "receive,ticks\n1,2\n", pllCols, 0, ErrHeader, `in.csv:1:1: unexpected header: column 1 is "receive", want "receive_ns"`},
	{"too few header columns", "receive_ns\n1\n", pllCols, 0, ErrHeader, "in.csv:1: unexpected header"},
	{"too many header columns", "receive_ns,ticks,scan_ticks,x\n", pllCols, 0, ErrHeader, "want receive_ns,ticks[,scan_ticks]"},
	{"short row", "receive_ns,ticks\n1,2\n3\n", pllCols, 1, ErrColumns, "in.csv:3: wrong number of columns: 1, the header has 2"},
	{"bad quote", "receive_ns,ticks\n1,\"2\n", pllCols, 0, csvErrQuote(), "in.csv:2:"},
	{"byte order mark", "\xef\xbb\xbfreceive_ns,ticks\n1,2\n", pllCols, 1, nil, ""},
	{"byte order mark on a data row", "receive_ns,ticks\n\xef\xbb\xbf1,2\n", pllCols, 0, ErrValue, `in.csv:2:1 (column "receive_ns"): bad value: "\ufeff1" is not a stamp`},
	{"long value cut", "receive_ns,ticks\n1," + strings.Repeat("9", 100_000) + "x\n", pllCols, 0, ErrValue,
		`in.csv:2:2 (column "ticks"): bad value: "` + strings.Repeat("9", 48) + `"…(100001 bytes)…"` + strings.Repeat("9", 15) + `x" is not a stamp`},
	{"line too long", "receive_ns,ticks\n1,2\n3," + strings.Repeat("4", MaxLine+1) + "\n5,6\n", pllCols, 1, ErrLineTooLong, "in.csv:3: line too long (more than 1048576 bytes without a newline)"},
	{"header too long", strings.Repeat("h", MaxLine+10), pllCols, 0, ErrLineTooLong, "in.csv:1: line too long"},
}

func csvErrQuote() error { return errors.New("quote") }

func TestReader(t *testing.T) {
	for _, tc := range readCases {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := readAll(tc.in, tc.cols)
			require.Equal(t, tc.rows, rows)
			if tc.errMsg == "" {
				require.NoError(t, err)
				return
			}
			var ce *Error
			require.ErrorAs(t, err, &ce)
			require.Equal(t, "in.csv", ce.File)
			require.Contains(t, err.Error(), tc.errMsg)
			if tc.name != "bad quote" {
				require.ErrorIs(t, err, tc.errIs)
			}
		})
	}
}

// readAll reads every row, parsing each column as a stamp.
func readAll(in string, cols Columns) (int, error) {
	r, err := NewReader(strings.NewReader(in), "in.csv", cols)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		for c := 0; c < row.Len(); c++ {
			if _, err := row.Stamp(c); err != nil {
				return n, err
			}
		}
		n++
	}
}

func TestQuote(t *testing.T) {
	require.Equal(t, `"abc"`, Quote("abc"))
	long := strings.Repeat("é", 100) // 200 bytes: the cut never splits a rune
	q := Quote(long)
	require.Contains(t, q, "…(200 bytes)…")
	require.Less(t, len(q), 120)
	require.True(t, strings.HasPrefix(q, `"éé`) && strings.HasSuffix(q, `éé"`), q)
}

func TestFieldErrors(t *testing.T) {
	r, err := NewReader(strings.NewReader("event,stamp_ns,index\nsample,12x,\nsample,5,-1\nsample,7,\n"), "f.csv",
		Columns{Required: []string{"event", "stamp_ns", "index"}})
	require.NoError(t, err)
	require.Equal(t, []string{"event", "stamp_ns", "index"}, r.Columns())
	row, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, 2, row.Line())
	require.Equal(t, "sample", row.String(0))
	_, err = row.Stamp(1)
	require.EqualError(t, err, `f.csv:2:2 (column "stamp_ns"): bad value: "12x" is not a stamp in integer nanoseconds`)
	require.ErrorIs(t, err, ErrValue)
	_, ok, err := row.OptUint(2)
	require.NoError(t, err)
	require.False(t, ok)

	row, err = r.Next()
	require.NoError(t, err)
	_, _, err = row.OptUint(2)
	require.EqualError(t, err, `f.csv:3:3 (column "index"): bad value: "-1" is not a non-negative integer`)
	v, ok, err := row.OptInt(2)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(-1), v)
	require.EqualError(t, row.Errorf(0, "unknown event %q", "x"), `f.csv:3:1 (column "event"): bad value: unknown event "x"`)
	require.EqualError(t, row.Errorf(-1, "%w", io.ErrUnexpectedEOF), `f.csv:3: unexpected EOF`)
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, "stamp_ns", "valid", "note")
	w.Stamp(stamp.Time(-5)).Bool(true).String(`a,"b"`).EndRow()
	w.Int(3).Empty().String(" x").EndRow()
	w.Uint(7).Float(0.25).String("plain").EndRow()
	require.NoError(t, w.Flush())
	require.Equal(t, "stamp_ns,valid,note\n-5,true,\"a,\"\"b\"\"\"\n3,,\" x\"\n7,0.25,plain\n", b.String())

	// What the writer quotes, the reader reads back.
	r, err := NewReader(&b, "b", Columns{Required: []string{"stamp_ns", "valid", "note"}})
	require.NoError(t, err)
	row, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, `a,"b"`, row.String(2))
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterError(t *testing.T) {
	w := NewWriter(failWriter{}, "a")
	for i := 0; i < 20000; i++ {
		w.Int(int64(i)).EndRow()
	}
	require.EqualError(t, w.Flush(), "disk full")
}

func FuzzReader(f *testing.F) {
	for _, tc := range readCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		_, err := readAll(in, pllCols)
		if err != nil {
			var ce *Error
			require.ErrorAs(t, err, &ce)
			require.NotEmpty(t, err.Error())
		}
	})
}

func BenchmarkReadWrite(b *testing.B) {
	var in strings.Builder
	in.WriteString("receive_ns,ticks\n")
	for i := 0; i < 10000; i++ {
		in.WriteString("1700000000123456789,4294967295\n")
	}
	data := in.String()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, _ := NewReader(strings.NewReader(data), "b", pllCols)
		w := NewWriter(io.Discard, "receive_ns", "ticks")
		for {
			row, err := r.Next()
			if err != nil {
				break
			}
			v, _ := row.Stamp(0)
			u, _ := row.Uint(1)
			w.Stamp(v).Uint(u).EndRow()
		}
		_ = w.Flush()
	}
}
