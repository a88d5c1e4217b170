# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""What the wire tools share (scripts/tests/rfc7306-wire.py and
scripts/mpa-wire): the CRC32c of RFC 5044 and a reader of classic pcap
files.  Written from the documents, sharing nothing with the driver."""
import struct

# Castagnoli, reflected (RFC 3385 / RFC 3720 appendix B.4; RFC 5044 uses
# it and sends the result in the order of RFC 3720's examples).
_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def crc_octets(data):
    """The four CRC octets as they go on the wire (RFC 3720 B.4 order)."""
    return struct.pack('<I', crc32c(data))


def read_pcap(path):
    """(seconds, frame, original length) of each record of a classic pcap
    file of either byte order; SystemExit if @path is not one."""
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError as e:
        raise SystemExit(f'{path}: {e.strerror}')
    magic = struct.unpack('<I', data[:4])[0] if len(data) >= 24 else 0
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        end = '<'
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        end = '>'
    else:
        raise SystemExit(f'{path}: not a pcap file')
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(end + 'IIII',
                                              data[off:off + 16])
        off += 16
        yield sec + frac / 1e6, data[off:off + incl], orig
        off += incl
