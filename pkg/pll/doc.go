// Package pll maps a device clock to host time.
package pll
