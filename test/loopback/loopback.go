// Package loopback keeps the DDS traffic of the processes that the
// integration tests (test/) and the soak (test/soak) start on this
// machine, whichever RMW the environment selects (RMW_IMPLEMENTATION, or
// the distribution's default when unset): it never sets the RMW, it
// writes the loopback configuration of both Cyclone DDS and Fast DDS (each
// reads only its own variable), and it restricts discovery with the
// variable the distribution reads, in a random domain.
package loopback

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// CycloneDDS keeps Cyclone DDS on loopback with multicast off;
// datagrams up to 64 kB (Cyclone's default fragments of 1344 bytes suit a
// 1500-byte MTU, not loopback's 64 kB: 1080p images cross at about twice
// the rate with these); a socket receive buffer larger than an image, as
// the ROS 2 DDS tuning guide advises (Cyclone asks for 16 MB, the kernel
// grants up to net.core.rmem_max, and less is not an error); one sample
// in reassembly per best-effort reader of a writer (Cyclone keeps four:
// after a flood of 25 MB images that DDS could not carry whole, a node
// held 170 MB of partial samples until the flooding writer went away, and
// 44 MB with one; docs/nodes.md#memory).
const CycloneDDS = `<CycloneDDS><Domain id="any"><General><AllowMulticast>false</AllowMulticast>` +
	`<MaxMessageSize>65500B</MaxMessageSize><FragmentSize>65000B</FragmentSize></General>` +
	`<Internal><SocketReceiveBufferSize max="16MB"/><DefragUnreliableMaxSamples>1</DefragUnreliableMaxSamples></Internal>` +
	`<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>50</MaxAutoParticipantIndex>` +
	`<Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>`

// FastDDS is the Fast DDS 2.x profile (Humble's 2.6, Jazzy's 2.14; both
// read it from FASTRTPS_DEFAULT_PROFILES_FILE only). It is the default
// participant profile, so every participant of the process takes it:
//   - a single transport, UDP over IPv4, allowed on 127.0.0.1 alone, and
//     useBuiltinTransports off: without that Fast DDS adds its shared
//     memory transport and a UDPv4 one on every interface;
//   - the locators for discovery (metatraffic) and for data on 127.0.0.1,
//     and 127.0.0.1 as the one initial peer, so discovery is unicast to
//     the well-known ports of this machine and no multicast locator is
//     made; maxInitialPeersRange: the participants per domain a test may
//     run (the nodes, the test's own, the ros2 CLI and its daemon) whose
//     ports a new participant announces itself to.
const FastDDS = `<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <profiles>
    <transport_descriptors>
      <transport_descriptor>
        <transport_id>timealign_loopback_udp</transport_id>
        <type>UDPv4</type>
        <maxInitialPeersRange>50</maxInitialPeersRange>
        <interfaceWhiteList><address>127.0.0.1</address></interfaceWhiteList>
      </transport_descriptor>
    </transport_descriptors>
    <participant profile_name="timealign_tests" is_default_profile="true">
      <rtps>
        <useBuiltinTransports>false</useBuiltinTransports>
        <userTransports><transport_id>timealign_loopback_udp</transport_id></userTransports>
        <builtin>
          <initialPeersList><locator><udpv4><address>127.0.0.1</address></udpv4></locator></initialPeersList>
          <metatrafficUnicastLocatorList><locator><udpv4><address>127.0.0.1</address></udpv4></locator></metatrafficUnicastLocatorList>
        </builtin>
        <defaultUnicastLocatorList><locator><udpv4><address>127.0.0.1</address></udpv4></locator></defaultUnicastLocatorList>
      </rtps>
    </participant>
  </profiles>
</dds>
`

// DiscoveryRange tells whether distribution distro (ROS_DISTRO) reads
// ROS_AUTOMATIC_DISCOVERY_RANGE (Iron, Jazzy and later) rather than
// ROS_LOCALHOST_ONLY (Humble and before).
func DiscoveryRange(distro string) bool {
	switch distro {
	case "", "foxy", "galactic", "humble":
		return false
	}
	return true
}

// Env writes the configuration files into dir and returns the variables
// (KEY=VALUE) that keep processes on loopback in a random domain of
// 10..209 (a domain's ports stay below 65535 up to 232), for distribution
// distro. Discovery: Humble reads ROS_LOCALHOST_ONLY=1 only; Jazzy reads
// ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, and still honours the
// deprecated ROS_LOCALHOST_ONLY=1 (with two WARN lines per process). Both
// are set on Jazzy: the machines' network rule asks for the first on
// every distribution, and the two agree.
func Env(dir, distro string) ([]string, error) {
	cyclone := filepath.Join(dir, "cyclonedds.xml")
	fast := filepath.Join(dir, "fastdds-loopback.xml")
	if err := os.WriteFile(cyclone, []byte(CycloneDDS), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(fast, []byte(FastDDS), 0o644); err != nil {
		return nil, err
	}
	env := []string{
		fmt.Sprintf("ROS_DOMAIN_ID=%d", 10+rand.IntN(200)),
		"CYCLONEDDS_URI=file://" + cyclone,
		"FASTRTPS_DEFAULT_PROFILES_FILE=" + fast,
	}
	if DiscoveryRange(distro) {
		env = append(env, "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST", "ROS_STATIC_PEERS=")
	}
	env = append(env, "ROS_LOCALHOST_ONLY=1")
	return env, nil
}
