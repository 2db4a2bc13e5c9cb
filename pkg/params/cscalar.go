package params

import (
	"math"
	"strconv"
	"strings"
)

// inferScalar gives an unquoted YAML scalar the type rcl_yaml_param_parser
// gives it (get_value in parse.c): the YAML 1.1 bool words, then what C's
// strtoll(s, 0) reads completely (decimal, 0x hex, 0 octal), then what C's
// strtod reads completely (decimal and hex floats, inf, nan, and YAML's
// .inf/.nan spellings), else a string. So "010" is the integer 8, "08" is
// the double 8.0, "1e3" a double, "null" and "~" strings.
func inferScalar(s string) Value {
	switch s {
	case "Y", "y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return BoolValue(true)
	case "N", "n", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return BoolValue(false)
	}
	if i, ok := cStrtoll(s); ok {
		return IntValue(i)
	}
	if d, ok := cStrtod(s); ok {
		return DoubleValue(d)
	}
	return StringValue(s)
}

func isCSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f') }

// cStrtoll reports the value of s if strtoll(s, &end, 0) consumes all of a
// non-empty s without overflow.
func cStrtoll(s string) (int64, bool) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	digits := s[i:]
	switch {
	case len(digits) > 2 && digits[0] == '0' && digits[1]|0x20 == 'x' && isHex(digits[2]):
		base, digits = 16, digits[2:]
	case len(digits) > 1 && digits[0] == '0':
		base, digits = 8, digits[1:]
	}
	if digits == "" {
		return 0, false
	}
	var mag uint64
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	for k := 0; k < len(digits); k++ {
		c := digits[k]
		var d uint64
		switch {
		case isDigit(c):
			d = uint64(c - '0')
		case 'a' <= c|0x20 && c|0x20 <= 'z':
			d = uint64(c|0x20-'a') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		if mag > (limit-d)/base {
			return 0, false // ERANGE: rcl then tries strtod
		}
		mag = mag*base + d
	}
	if neg {
		return int64(-mag), true // -(2^63) wraps to MinInt64, as wanted
	}
	return int64(mag), true
}

// cStrtod reports the value of s if glibc's strtod consumes all of a
// non-empty s without ERANGE, with rcl's special cases for the YAML spellings
// .nan .NaN .NAN [+-].inf .Inf .INF.
func cStrtod(s string) (float64, bool) {
	switch s {
	case ".nan", ".NaN", ".NAN":
		return math.NaN(), true
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return math.Inf(1), true
	case "-.inf", "-.Inf", "-.INF":
		return math.Inf(-1), true
	}
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	body := s[i:]
	sign := ""
	if body != "" && (body[0] == '+' || body[0] == '-') {
		sign, body = body[:1], body[1:]
	}
	lower := strings.ToLower(body)
	switch {
	case lower == "inf" || lower == "infinity":
		if sign == "-" {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case lower == "nan" || (strings.HasPrefix(lower, "nan(") && strings.HasSuffix(lower, ")") && nanChars(lower[4:len(lower)-1])):
		return math.NaN(), true
	}
	var norm string
	if len(body) > 2 && body[0] == '0' && body[1]|0x20 == 'x' {
		mant, exp, ok := cHexFloat(body[2:])
		if !ok {
			return 0, false
		}
		norm = sign + "0x" + mant + "p" + exp
	} else {
		if !cDecFloat(body) {
			return 0, false
		}
		norm = sign + body
	}
	d, err := strconv.ParseFloat(norm, 64)
	if err != nil {
		return 0, false // overflow: ERANGE, rcl keeps the string
	}
	if (d == 0 || math.Abs(d) < 0x1p-1022) && hasNonzeroDigit(body) {
		return 0, false // underflow: ERANGE as well
	}
	return d, true
}

func nanChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isDigit(c) || ('a' <= c && c <= 'z') || c == '_') {
			return false
		}
	}
	return true
}

// cDecFloat checks digits[.digits][(e|E)[+-]digits] with at least one
// mantissa digit, and nothing else.
func cDecFloat(s string) bool {
	i, n := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i, n = i+1, n+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, n = i+1, n+1
		}
	}
	if n == 0 {
		return false
	}
	if i < len(s) && s[i]|0x20 == 'e' {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j == len(s) || !isDigit(s[j]) {
			return false // strtod would stop before the 'e'
		}
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		i = j
	}
	return i == len(s)
}

// cHexFloat checks hexdigits[.hexdigits][(p|P)[+-]digits] and returns the
// mantissa and the exponent (defaulting to 0) in Go's syntax.
func cHexFloat(s string) (mant, exp string, ok bool) {
	i, n := 0, 0
	for i < len(s) && isHex(s[i]) {
		i, n = i+1, n+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isHex(s[i]) {
			i, n = i+1, n+1
		}
	}
	if n == 0 {
		return "", "", false
	}
	mant, exp = s[:i], "0"
	if i < len(s) && s[i]|0x20 == 'p' {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j == len(s) || !isDigit(s[j]) {
			return "", "", false
		}
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		exp, i = s[i+1:j], j
	}
	return mant, exp, i == len(s)
}

func hasNonzeroDigit(s string) bool {
	if len(s) > 2 && s[0] == '0' && s[1]|0x20 == 'x' {
		for i := 2; i < len(s) && s[i]|0x20 != 'p'; i++ {
			if isHex(s[i]) && s[i] != '0' {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(s) && s[i]|0x20 != 'e'; i++ {
		if s[i] >= '1' && s[i] <= '9' {
			return true
		}
	}
	return false
}
