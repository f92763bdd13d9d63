"""Adds synthetic read-back values to a copy of a profile: the gradient norm Megatron's
clipping reads in each step of the one-GPU dense recording, which was recorded before
read-back values were kept (host_time/readback_table.h).  For showing the mechanism
end to end without a GPU; a re-recording (tools/device/record_megatron_on_device.sh) holds the
real values.

    python3 examples/megatron/synthetic_norm_reads.py profiles/H100.sqlite OUT.sqlite [VALUE]

The read is found by what follows it in the recording: the copy (`.item()` of the
all-reduced squared norm: a copy, then a stream synchronisation) three calls before each
step's run of `grad * coeff` kernels (`AUnaryFunctor<... MulFunctor>`:
local_multi_tensor_scale), which a `FillFunctor<int>` starts.
VALUE (default 25.0, a norm of 5: clip_grad 1.0 clips) is written as a float32 there, and
0.0 (float32) at every other copy a stream synchronisation follows (the program's other
`.item()` reads, 4 bytes each in this program), as a recording that kept every read would:
without them, the norm's value would be the only one recorded at the copy's call site and
a lookup falling back from a context the recording does not hold to the site alone would
return it for every read there (readback_table.h).
"""

import shutil
import sqlite3
import struct
import sys

RUN = "megatron_dense.tsv.zst"


def main():
    src, dst = sys.argv[1], sys.argv[2]
    value = float(sys.argv[3]) if len(sys.argv) > 3 else 25.0
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    db.execute(
        "CREATE TABLE IF NOT EXISTS host_readbacks(run TEXT NOT NULL, thread TEXT NOT NULL,"
        " seq INTEGER NOT NULL, bytes TEXT NOT NULL, PRIMARY KEY(run, thread, seq)) WITHOUT ROWID"
    )
    added = 0
    for (thread,) in db.execute("SELECT DISTINCT thread FROM host_gaps WHERE run = ?", (RUN,)).fetchall():
        rows = db.execute(
            "SELECT g.seq, l.text FROM host_gaps g JOIN host_labels l ON l.id = g.label"
            " WHERE g.run = ? AND g.thread = ? ORDER BY g.seq",
            (RUN, thread),
        ).fetchall()
        for i in range(len(rows) - 1):
            if rows[i][1].startswith("copy:async@") and rows[i + 1][1].startswith("sync:stream@"):
                db.execute(
                    "INSERT OR REPLACE INTO host_readbacks VALUES(?, ?, ?, ?)",
                    (RUN, thread, rows[i][0], struct.pack("<f", 0.0).hex()),
                )
        for i in range(3, len(rows)):
            scale = "AUnaryFunctor" in rows[i][1] and "MulFunctor" in rows[i][1]
            if (scale and "FillFunctor<int>" in rows[i - 1][1]
                    and rows[i - 2][1].startswith("sync:stream@")
                    and rows[i - 3][1].startswith("copy:async@")):
                db.execute(
                    "INSERT OR REPLACE INTO host_readbacks VALUES(?, ?, ?, ?)",
                    (RUN, thread, rows[i - 3][0], struct.pack("<f", value).hex()),
                )
                added += 1
    db.commit()
    print(f"{dst}: {added} norm reads of {value} added to {RUN}")


if __name__ == "__main__":
    main()
