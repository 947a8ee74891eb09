// The fixture client's socket side with the `worker` knob on (docs/fixture-protocol.md):
// a dedicated Worker that opens the client's one WebSocket and only moves bytes. The page
// (fixture.js) keeps inputs, decoding, drawing and the ack policy.
//
// page -> worker: ArrayBuffer (transferred): one client message, sent as is.
// worker -> page: ArrayBuffer (transferred): one server frame, as received;
//                 { type: 'open' } and { type: 'close', code, reason }: the socket's state;
//                 a string: a text frame (a protocol error the page counts).
'use strict';
const ws = new WebSocket(`ws://${location.host}/ws`);
ws.binaryType = 'arraybuffer';
ws.onopen = () => { postMessage({ type: 'open' }); };
ws.onclose = (e) => { postMessage({ type: 'close', code: e.code, reason: e.reason }); };
ws.onmessage = (e) => {
  const d = e.data;
  if (d instanceof ArrayBuffer) postMessage(d, [d]);
  else postMessage(String(d));
};
onmessage = (e) => {
  if (ws.readyState === 1 && e.data instanceof ArrayBuffer) ws.send(e.data);
};
