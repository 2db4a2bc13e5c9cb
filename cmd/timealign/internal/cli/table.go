package cli

import (
	"fmt"
	"io"
	"strings"
)

// Table is a plain-text table with right-aligned numeric columns: the
// first column is aligned left, the others right.
type Table struct {
	head []string
	rows [][]string
}

// NewTable starts a table with the column heads.
func NewTable(head ...string) *Table { return &Table{head: head} }

// Row adds a row, one cell per column.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Write writes the table: its head, a rule, its rows.
func (t *Table) Write(w io.Writer) {
	width := make([]int, len(t.head))
	for i, h := range t.head {
		width[i] = len([]rune(h))
	}
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString("  " + c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(t.head)
	sep := make([]string, len(width))
	for i := range width {
		sep[i] = strings.Repeat("─", width[i])
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
}
