#!/usr/bin/env python3
"""Independent reference of the minlsh MinHash family (docs/minhash.md).

Written from the specification with Python's big integers, sharing no code
with the C library, so the C tests can compare against it:

  ref_minhash.py mulmod SEED N      (a, x, b, (a * (x mod p) + b) mod p) lines:
                                    edge cases, then N random triples
  ref_minhash.py coefficients SEED K  K lines "a b" (hex) for the family
  ref_minhash.py redraw-seeds       seeds whose SplitMix64 stream hits each
                                    rejection rule (see below)
  ref_minhash.py golden             tests/golden/signatures.txt on stdout
  ref_minhash.py golden-oph         tests/golden/oph_signatures.txt on stdout
                                    (one-permutation hashing, section 7)
  ref_minhash.py selftest           internal consistency checks

All numbers are printed in hexadecimal without a prefix.
"""
import random
import sys

P = (1 << 61) - 1
M64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15
C1 = 0xBF58476D1CE4E5B9
C2 = 0x94D049BB133111EB
EMPTY = 0xFFFFFFFF
K_MAX = 1024


def mix(z):
    """The SplitMix64 output function."""
    z = ((z ^ (z >> 30)) * C1) & M64
    z = ((z ^ (z >> 27)) * C2) & M64
    return z ^ (z >> 31)


def splitmix64(seed):
    state = seed & M64
    while True:
        state = (state + GOLDEN_GAMMA) & M64
        yield mix(state)


def coefficients(seed, k):
    """The k pairs (a_i, b_i): a_i = next() >> 3 redrawn while 0 or p,
    then b_i = next() >> 3 redrawn while p."""
    if not 1 <= k <= K_MAX:
        raise ValueError("k out of range")
    gen = splitmix64(seed)
    out = []
    for _ in range(k):
        a = next(gen) >> 3
        while a == 0 or a == P:
            a = next(gen) >> 3
        b = next(gen) >> 3
        while b == P:
            b = next(gen) >> 3
        out.append((a, b))
    return out


def h(a, b, shingle_hash):
    return (a * (shingle_hash % P) + b) % P


def signature(seed, k, hashes):
    coef = coefficients(seed, k)
    if not hashes:
        return [EMPTY] * k
    xs = set(x % P for x in hashes)
    return [min((a * x + b) % P for x in xs) >> 29 for (a, b) in coef]


# ---- inverting SplitMix64, to find seeds that exercise rejection ----------

OPH_PROBES = 64


def oph_bins(seed, k, hashes):
    """One-permutation binning: v = h_0(x), bin = (v k) >> 61, value =
    ((v k) mod 2^61) >> 29, the minimum per bin; EMPTY where no shingle."""
    (a, b), = coefficients(seed, 1)
    bins = [EMPTY] * k
    for x in hashes:
        t = h(a, b, x) * k
        j, val = t >> 61, (t & P) >> 29
        bins[j] = min(bins[j], val)
    return bins


def oph_densify(seed, k, bins):
    """Optimal densification: empty bin j probes src = ((z >> 32) k) >> 32,
    z = SplitMix64's first output from state dkey ^ (j << 32 | t), for
    t = 0..63; after 64 misses, the first non-empty bin after the last probe,
    circularly. A value of EMPTY is an empty bin."""
    if all(v == EMPTY for v in bins):
        return [EMPTY] * k
    dkey = coefficients(seed, 2)[1][0]
    out = []
    for j in range(k):
        if bins[j] != EMPTY:
            out.append(bins[j])
            continue
        for t in range(OPH_PROBES):
            z = next(splitmix64(dkey ^ ((j << 32) | t)))
            src = ((z >> 32) * k) >> 32
            if bins[src] != EMPTY:
                break
        while bins[src] == EMPTY:
            src = (src + 1) % k
        out.append(bins[src])
    return out


def oph_signature(seed, k, hashes):
    return oph_densify(seed, k, oph_bins(seed, k, hashes))


def unxorshift(y, s):
    x = y
    for _ in range(64 // s + 1):
        x = y ^ (x >> s)
    return x


def unmix(z):
    z = unxorshift(z, 31)
    z = (z * pow(C2, -1, 1 << 64)) & M64
    z = unxorshift(z, 27)
    z = (z * pow(C1, -1, 1 << 64)) & M64
    return unxorshift(z, 30)


def seed_for_draw(draw_index, output):
    """The seed whose draw number draw_index (0-based) outputs `output`."""
    state = unmix(output)
    return (state - (draw_index + 1) * GOLDEN_GAMMA) & M64


def redraw_seeds():
    """(name, seed) pairs. Without earlier rejections a_i is draw 2i and b_i
    draw 2i + 1."""
    return [
        ("a0_zero", seed_for_draw(0, 5)),            # a_0 draw >> 3 == 0
        ("a0_p", seed_for_draw(0, M64 - 2)),         # a_0 draw >> 3 == p
        ("b0_p", seed_for_draw(1, M64)),             # b_0 draw >> 3 == p
        ("a5_zero", seed_for_draw(10, 0)),           # a_5 draw >> 3 == 0
        ("b7_p", seed_for_draw(15, (P << 3) | 4)),   # b_7 draw >> 3 == p
    ]


# ---- commands --------------------------------------------------------------

def cmd_mulmod(seed, n):
    rng = random.Random(seed)
    out = sys.stdout
    a_edge = [1, 2, 3, P - 1, P - 2, 1 << 60, (1 << 32) - 1, 1 << 32]
    x_edge = [0, 1, 2, P - 1, P, P + 1, 2 * P - 1, 2 * P, 2 * P + 1, 1 << 61,
              1 << 63, M64, M64 - 1, M64 - 7, M64 - 8, (1 << 32) - 1, 1 << 32,
              7 * P, 7 * P + 6]
    b_edge = [0, 1, P - 1, P - 2]
    lines = []
    for a in a_edge:
        for x in x_edge:
            for b in b_edge:
                lines.append("%x %x %x %x\n" % (a, x, b, h(a, b, x)))
    out.write("".join(lines))
    chunk = []
    for i in range(n):
        a = rng.randrange(1, P)
        x = rng.getrandbits(64)
        b = rng.randrange(0, P)
        chunk.append("%x %x %x %x\n" % (a, x, b, (a * (x % P) + b) % P))
        if len(chunk) == 10000:
            out.write("".join(chunk))
            chunk = []
    out.write("".join(chunk))


def cmd_coefficients(seed, k):
    sys.stdout.write("".join("%x %x\n" % ab for ab in coefficients(seed, k)))


def cmd_redraw_seeds():
    for name, seed in redraw_seeds():
        print("%s %x" % (name, seed))


def golden_cases():
    rs = dict(redraw_seeds())
    edge = [0, 1, P - 1, P, P + 1, 1 << 61, 1 << 63, M64, 2 * P]

    def rand_hashes(case_seed, n):
        rng = random.Random(case_seed)
        return [rng.getrandbits(64) for _ in range(n)]

    dup = rand_hashes(11, 40)
    return [
        ("single_zero", 1, 1, [0]),
        ("edges", 1, 16, edge),
        ("empty", 7, 5, []),
        ("k5_n3", 0x0123456789ABCDEF, 5, rand_hashes(1, 3)),
        ("k128_n100", 42, 128, rand_hashes(2, 100)),
        ("k128_dups", 42, 128, dup + dup[:17] + dup[3:9]),
        ("k257_n257", 0, 257, rand_hashes(3, 257)),
        ("k1023_n600", 0xFFFFFFFFFFFFFFFF, 1023, rand_hashes(4, 600)),
        ("k1024_n1000", 0x9E3779B97F4A7C15, 1024, rand_hashes(5, 1000)),
        ("redraw_a0_zero", rs["a0_zero"], 3, rand_hashes(6, 10)),
        ("redraw_b7_p", rs["b7_p"], 9, rand_hashes(7, 10)),
    ]


def oph_golden_cases():
    def rand_hashes(case_seed, n):
        rng = random.Random(case_seed)
        return [rng.getrandbits(64) for _ in range(n)]

    def preimage(seed, v):
        """A hash x with h_0(x) = v (x < p), by the modular inverse of a_0."""
        (a, b), = coefficients(seed, 1)
        return (v - b) * pow(a, P - 2, P) % P

    # Bin 0 of k = 4 whose only value is 0xFFFFFFFF (counts as empty), and
    # the smallest value of bin 3.
    top = [preimage(9, ((1 << 61) - (1 << 29)) // 4), preimage(9, (3 << 61) // 4 + 1)]
    edge = [0, 1, P - 1, P, P + 1, 1 << 61, 1 << 63, M64, 2 * P]
    dup = rand_hashes(21, 30)
    return [
        ("oph_empty", 7, 64, []),
        ("oph_single_k1", 1, 1, [0]),
        ("oph_edges", 1, 16, edge),
        ("oph_top_value", 9, 4, top),
        ("oph_k5_n3", 0x0123456789ABCDEF, 5, rand_hashes(1, 3)),
        ("oph_k64_n20", 3, 64, rand_hashes(22, 20)),
        ("oph_k128_n100", 42, 128, rand_hashes(2, 100)),
        ("oph_k128_dups", 42, 128, dup + dup[:11] + dup[5:9]),
        ("oph_k100_n5000", 5, 100, rand_hashes(23, 5000)),
        ("oph_k257_n257", 0, 257, rand_hashes(3, 257)),
        ("oph_k1024_n1", 0xFFFFFFFFFFFFFFFF, 1024, rand_hashes(24, 1)),
        ("oph_k1024_n2000", 0x9E3779B97F4A7C15, 1024, rand_hashes(5, 2000)),
    ]


def write_golden(title, command, cases, sign):
    w = sys.stdout.write
    w("# Golden %s (docs/minhash.md), generated by the Python\n" % title)
    w("# reference, not by the C library:\n")
    w("#   /usr/bin/python3 tests/ref_minhash.py %s\n" % command)
    w("# Each case: seed and k of the family, the n shingle hashes (64-bit,\n")
    w("# repeats allowed), then the k signature values. Any change here is an\n")
    w("# ABI break (docs/design.md).\n")
    for name, seed, k, hashes in cases:
        sig = sign(seed, k, hashes)
        w("case %s seed %x k %d n %d\n" % (name, seed, k, len(hashes)))
        w("hashes\n")
        for i in range(0, len(hashes), 4):
            w(" ".join("%016x" % v for v in hashes[i:i + 4]) + "\n")
        w("sig\n")
        for i in range(0, k, 8):
            w(" ".join("%08x" % v for v in sig[i:i + 8]) + "\n")
        w("end\n")


def cmd_golden_oph():
    write_golden("one-permutation (OPH) signatures",
                 "golden-oph > tests/golden/oph_signatures.txt", oph_golden_cases(),
                 oph_signature)


def cmd_golden():
    write_golden("MinHash signatures", "golden > tests/golden/signatures.txt", golden_cases(),
                 signature)


def cmd_selftest():
    # The rejection seeds really hit their rule.
    for name, seed in redraw_seeds():
        draws = splitmix64(seed)
        raw = [next(draws) >> 3 for _ in range(16)]
        hit = {"a0_zero": raw[0] == 0, "a0_p": raw[0] == P, "b0_p": raw[1] == P,
               "a5_zero": raw[10] == 0, "b7_p": raw[15] == P}[name]
        assert hit, name
    # Prefix property and ranges.
    for seed in (0, 1, M64):
        big = coefficients(seed, K_MAX)
        for k in (1, 2, 128, 1023):
            assert coefficients(seed, k) == big[:k]
        assert all(1 <= a < P and 0 <= b < P for a, b in big)
    print("selftest ok")


def main(argv):
    if len(argv) >= 2 and argv[1] == "mulmod" and len(argv) == 4:
        cmd_mulmod(int(argv[2], 0), int(argv[3], 0))
    elif len(argv) >= 2 and argv[1] == "coefficients" and len(argv) == 4:
        cmd_coefficients(int(argv[2], 0), int(argv[3], 0))
    elif argv[1:] == ["redraw-seeds"]:
        cmd_redraw_seeds()
    elif argv[1:] == ["golden"]:
        cmd_golden()
    elif argv[1:] == ["golden-oph"]:
        cmd_golden_oph()
    elif argv[1:] == ["selftest"]:
        cmd_selftest()
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
