// An independent reader of MCAP files: foxglove's TypeScript MCAP reader
// (@mcap/core) reads each file twice, as a stream with every CRC checked,
// and through its summary and indexes as a seeking player does, and every
// message of a ros2msg schema is decoded by @foxglove/rosmsg2-serialization,
// which must consume all of it but CDR's padding. Prints one JSON line
// per file: per-topic counts and the header stamps of the first and last
// messages, for the Go test to compare with what it wrote.
//
// Usage: node check.mjs FILE.mcap ...
import { readFileSync } from "node:fs";
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { loadDecompressHandlers } from "@mcap/support";
import { parse } from "@foxglove/rosmsg";
import { MessageReader } from "@foxglove/rosmsg2-serialization";

const decompressHandlers = await loadDecompressHandlers();

function stampNs(msg) {
  const s = msg?.header?.stamp;
  if (s === undefined) return null;
  return (BigInt(s.sec) * 1000000000n + BigInt(s.nanosec)).toString();
}

async function check(path) {
  const data = readFileSync(path);
  const out = { file: path, errors: [], topics: {} };
  const err = (m) => {
    if (out.errors.length < 20) out.errors.push(m);
  };

  // 1. The stream, CRCs checked.
  const stream = new McapStreamReader({ validateCrcs: true, decompressHandlers });
  stream.append(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  const channels = new Map();
  const schemas = new Map();
  const streamCounts = new Map();
  let rec;
  try {
    while ((rec = stream.nextRecord())) {
      if (rec.type === "Schema") schemas.set(rec.id, rec);
      if (rec.type === "Channel") channels.set(rec.id, rec);
      if (rec.type === "Message") streamCounts.set(rec.channelId, (streamCounts.get(rec.channelId) ?? 0) + 1);
    }
    if (!stream.done()) err("stream: the file does not end with a footer");
  } catch (e) {
    err(`stream: ${e.message}`);
  }

  // 2. Summary and indexes, messages decoded.
  const readable = {
    size: async () => BigInt(data.byteLength),
    read: async (offset, size) => new Uint8Array(data.buffer, data.byteOffset + Number(offset), Number(size)),
  };
  try {
    const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers });
    if (reader.header.profile !== "ros2") err(`profile is "${reader.header.profile}", want ros2`);
    const decoders = new Map();
    for (const [id, ch] of reader.channelsById) {
      const schema = reader.schemasById.get(ch.schemaId);
      const t = { type: schema?.name ?? "", count: 0, decoded: 0, first_stamp: null, last_stamp: null };
      out.topics[ch.topic] = t;
      if (ch.messageEncoding !== "cdr") err(`${ch.topic}: message encoding ${ch.messageEncoding}`);
      if (!("offered_qos_profiles" in Object.fromEntries(ch.metadata))) err(`${ch.topic}: no offered_qos_profiles`);
      if (schema && schema.encoding === "ros2msg") {
        try {
          const defs = parse(new TextDecoder().decode(schema.data), { ros2: true });
          decoders.set(id, new MessageReader(defs));
        } catch (e) {
          err(`${ch.topic}: schema ${schema.name} does not parse: ${e.message}`);
        }
      }
    }
    let prev = -1n;
    for await (const m of reader.readMessages({ validateCrcs: true })) {
      const ch = reader.channelsById.get(m.channelId);
      const t = out.topics[ch.topic];
      t.count++;
      if (m.logTime < prev) err(`${ch.topic}: readMessages went back in log time`);
      prev = m.logTime;
      const dec = decoders.get(m.channelId);
      if (!dec) continue;
      try {
        const msg = dec.readMessage(m.data);
        // CDR pads a message to 4 bytes: more left over means the bytes
        // do not follow the schema.
        if (m.data.byteLength - dec.lastReadByteLength() > 3) {
          err(`${ch.topic}: message of ${m.data.byteLength} bytes has ${m.data.byteLength - dec.lastReadByteLength()} bytes after its ${t.type}`);
        }
        t.decoded++;
        const s = stampNs(msg);
        if (t.first_stamp === null) t.first_stamp = s;
        t.last_stamp = s;
      } catch (e) {
        err(`${ch.topic}: message does not decode: ${e.message}`);
      }
    }
    for (const [id, ch] of reader.channelsById) {
      const n = streamCounts.get(id) ?? 0;
      if (n !== out.topics[ch.topic].count) err(`${ch.topic}: ${n} messages in the stream, ${out.topics[ch.topic].count} through the index`);
      const stat = reader.statistics?.channelMessageCounts.get(id);
      if (stat !== undefined && Number(stat) !== n) err(`${ch.topic}: statistics say ${stat}, the file holds ${n}`);
    }
  } catch (e) {
    err(`indexed: ${e.message}`);
  }
  return out;
}

for (const path of process.argv.slice(2)) {
  console.log(JSON.stringify(await check(path)));
}
