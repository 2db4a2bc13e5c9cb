package mav

// GPS time counts weeks and milliseconds since 1980-01-06 without leap
// seconds; UTC has inserted one now and then since, so GPS time runs ahead
// of UTC by the leap seconds inserted until then (18 s since 2017).

// gpsEpoch is 1980-01-06T00:00:00Z in Unix seconds.
const gpsEpoch = 315964800

// leaps lists the Unix seconds at which GPS − UTC grew by one second.
var leaps = []int64{
	362793600,  // 1981-07-01
	394329600,  // 1982-07-01
	425865600,  // 1983-07-01
	489024000,  // 1985-07-01
	567993600,  // 1988-01-01
	631152000,  // 1990-01-01
	662688000,  // 1991-01-01
	709948800,  // 1992-07-01
	741484800,  // 1993-07-01
	773020800,  // 1994-07-01
	820454400,  // 1996-01-01
	867715200,  // 1997-07-01
	915148800,  // 1999-01-01
	1136073600, // 2006-01-01
	1230768000, // 2009-01-01
	1341100800, // 2012-07-01
	1435708800, // 2015-07-01
	1483228800, // 2017-01-01
}

// gpsToUnixMicros converts a GPS week and millisecond of the week to Unix
// time in µs (UTC), or false for week 0 (no time yet) or an impossible
// millisecond.
func gpsToUnixMicros(week uint16, ms uint32) (int64, bool) {
	if week == 0 || ms >= 7*24*3600*1000 {
		return 0, false
	}
	gpsSec := int64(gpsEpoch) + int64(week)*7*24*3600 + int64(ms/1000)
	// GPS − UTC at that moment: the leap seconds before it (comparing in
	// GPS seconds, each leap shifted by the ones before it).
	n := int64(0)
	for i, l := range leaps {
		if gpsSec-int64(i+1) >= l {
			n = int64(i + 1)
		}
	}
	return (gpsSec-n)*1e6 + int64(ms%1000)*1e3, true
}
