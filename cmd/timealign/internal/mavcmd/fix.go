package mavcmd

import (
	"encoding/json"
	"strconv"

	"github.com/timealign/timealign/pkg/stamp"
)

// Positions as foxglove.LocationFix: Foxglove's map panel shows a topic of
// that schema as a track. mav merge writes one beside each channel of
// positions (/bin/GPS/fix, /bin/GPS[1]/fix for a second receiver,
// /tlog/1/1/GLOBAL_POSITION_INT/fix, GPS_RAW_INT, GPS_INPUT), stamped with the merged log
// time, for the records with a fix.

// fixKey is a position channel and instance.
type fixKey struct {
	ch   uint16
	inst int16
}

// Kinds of position messages.
const (
	fixNone      = iota
	fixBinGPS    // BIN GPS: Status, Lat, Lng (degrees), Alt (m)
	fixGlobalPos // MAVLink GLOBAL_POSITION_INT: lat, lon (1e-7 degrees), alt (mm)
	fixGPSRaw    // MAVLink GPS_RAW_INT: fix_type, lat, lon (1e-7 degrees), alt (mm)
	fixGPSInput  // MAVLink GPS_INPUT (a companion computer's GPS): fix_type, lat, lon (1e-7 degrees), alt (m)
)

// fixKind says whether a channel carries positions, and how.
func fixKind(r *chanRef) int {
	switch {
	case !r.tlog && r.name == "GPS":
		return fixBinGPS
	case r.tlog && r.name == "GLOBAL_POSITION_INT":
		return fixGlobalPos
	case r.tlog && r.name == "GPS_RAW_INT":
		return fixGPSRaw
	case r.tlog && r.name == "GPS_INPUT":
		return fixGPSInput
	}
	return fixNone
}

// locationFix appends to dst the LocationFix of a position message's JSON,
// stamped t; ok is false when the message holds no fix (no GPS lock, a
// position of 0, 0).
func locationFix(dst []byte, kind int, t stamp.Time, data []byte) ([]byte, bool) {
	var lat, lon, alt float64
	switch kind {
	case fixBinGPS:
		var g struct {
			Status   *int
			Lat, Lng float64
			Alt      float64
		}
		if json.Unmarshal(data, &g) != nil || g.Status == nil || *g.Status < 2 {
			return dst, false
		}
		lat, lon, alt = g.Lat, g.Lng, g.Alt
	case fixGlobalPos, fixGPSRaw:
		var g struct {
			FixType       *int  `json:"fix_type"`
			Lat, Lon, Alt int64 // 1e-7 degrees, mm
		}
		if json.Unmarshal(data, &g) != nil || kind == fixGPSRaw && (g.FixType == nil || *g.FixType < 2) {
			return dst, false
		}
		lat, lon, alt = float64(g.Lat)/1e7, float64(g.Lon)/1e7, float64(g.Alt)/1000
	case fixGPSInput:
		var g struct {
			FixType  *int `json:"fix_type"`
			Lat, Lon int64
			Alt      float64
		}
		if json.Unmarshal(data, &g) != nil || g.FixType == nil || *g.FixType < 2 {
			return dst, false
		}
		lat, lon, alt = float64(g.Lat)/1e7, float64(g.Lon)/1e7, g.Alt
	default:
		return dst, false
	}
	if lat == 0 && lon == 0 {
		return dst, false
	}
	ns := int64(t)
	if ns < 0 {
		ns = 0
	}
	dst = append(dst, `{"timestamp":{"sec":`...)
	dst = strconv.AppendInt(dst, ns/1e9, 10)
	dst = append(dst, `,"nsec":`...)
	dst = strconv.AppendInt(dst, ns%1e9, 10)
	dst = append(dst, `},"frame_id":"","latitude":`...)
	dst = strconv.AppendFloat(dst, lat, 'g', -1, 64)
	dst = append(dst, `,"longitude":`...)
	dst = strconv.AppendFloat(dst, lon, 'g', -1, 64)
	dst = append(dst, `,"altitude":`...)
	dst = strconv.AppendFloat(dst, alt, 'g', -1, 64)
	dst = append(dst, `,"position_covariance":[0,0,0,0,0,0,0,0,0],"position_covariance_type":0}`...)
	return dst, true
}

// locationFixSchema is the JSON schema of foxglove.LocationFix.
var locationFixSchema = []byte(`{"title":"foxglove.LocationFix","description":"A navigation satellite fix","type":"object",` +
	`"properties":{"timestamp":{"type":"object","title":"time","properties":{"sec":{"type":"integer","minimum":0},` +
	`"nsec":{"type":"integer","minimum":0,"maximum":999999999}},"description":"Timestamp of the message (the merged log time)"},` +
	`"frame_id":{"type":"string","description":"Frame for the sensor"},` +
	`"latitude":{"type":"number","description":"Latitude in degrees"},` +
	`"longitude":{"type":"number","description":"Longitude in degrees"},` +
	`"altitude":{"type":"number","description":"Altitude in meters"},` +
	`"position_covariance":{"type":"array","items":{"type":"number"},"minItems":9,"maxItems":9,"description":"Position covariance (m^2), ENU, row-major: unknown here"},` +
	`"position_covariance_type":{"type":"integer","description":"0: unknown"}}}`)
