# SPDX-License-Identifier: MIT
"""Reads a Stan CSV file by the rules cmdstanpy (utils/stancsv.py) and
ArviZ's from_cmdstan use, with the standard library only: the "#" config
lines as "key = value" (a trailing "(Default)" dropped), the header line,
the warmup draws when save_warmup is in the config (not for fixed_param,
whose file has no adaptation either), "# Adaptation
terminated", "# Step size = x", "# Diagonal elements of inverse mass
matrix:" (one "# a, b" line) or "# Elements of inverse mass matrix:" (one
line per row), then the draws up to the next "#" line; each draw must have
as many fields as the header. Column names "a.1.2" become "a[1,2]" as
cmdstanpy's munge_varname does. Values: decimal numbers, nan, inf, -inf."""
import sys


def munge(name):
    if '.' not in name:
        return name
    base, rest = name.split('.', 1)
    return base + '[' + rest.replace('.', ',') + ']'


def number(s):
    return float(s)  # float() reads 'nan', 'inf', '-inf'


def read(path):
    with open(path) as fd:
        lines = [l.rstrip('\n') for l in fd]
    i, config = 0, {}
    while i < len(lines) and lines[i].startswith('#'):
        line = lines[i].replace('(Default)', '').lstrip(' #\t')
        kv = line.split('=')
        if len(kv) == 2 and kv[0].strip() != 'file':
            raw = kv[1].strip()
            try:
                val = int(raw)
            except ValueError:
                try:
                    val = float(raw)
                except ValueError:
                    val = raw
            config[kv[0].strip()] = val
        i += 1
    header = lines[i].strip().split(',')
    i += 1
    names = [munge(n) for n in header]

    def draws(i):
        out = []
        while i < len(lines) and lines[i].strip() and not lines[i].startswith('#'):
            fields = lines[i].strip().split(',')
            if len(fields) != len(header):
                raise ValueError('line %d: %d fields, header has %d' % (i + 1, len(fields), len(header)))
            out.append([number(f) for f in fields])
            i += 1
        return out, i

    warmup = []
    fixed = config.get('algorithm') == 'fixed_param'
    if 'save_warmup' in config and not fixed:
        warmup, i = draws(i)
    step, metric = None, None
    if not fixed:
        if lines[i].strip() != '# Adaptation terminated':
            raise ValueError('line %d: expected "# Adaptation terminated", got %r' % (i + 1, lines[i]))
        label, val = lines[i + 1].split('=')
        if not label.startswith('# Step size'):
            raise ValueError('line %d: expected the step size' % (i + 2))
        step = float(val.strip())
        i += 2
        kind = config['metric']
        if kind == 'diag_e':
            if lines[i].strip() != '# Diagonal elements of inverse mass matrix:':
                raise ValueError('line %d: expected the diagonal inverse metric' % (i + 1))
            metric = [float(x) for x in lines[i + 1].lstrip(' #\t').split(',')]
            i += 2
        elif kind == 'dense_e':
            if lines[i].strip() != '# Elements of inverse mass matrix:':
                raise ValueError('line %d: expected the dense inverse metric' % (i + 1))
            first = [float(x) for x in lines[i + 1].lstrip(' #\t').split(',')]
            metric = [first]
            for k in range(1, len(first)):
                row = [float(x) for x in lines[i + 1 + k].lstrip(' #\t').split(',')]
                if len(row) != len(first):
                    raise ValueError('line %d: a row of the dense metric has %d values' % (i + 2 + k, len(row)))
                metric.append(row)
            i += 1 + len(first)
    sampling, i = draws(i)
    timing = [l for l in lines[i:] if 'Elapsed Time' in l or 'seconds' in l]
    return {'config': config, 'names': names, 'warmup': warmup, 'draws': sampling,
            'step': step, 'metric': metric, 'timing': timing}


if __name__ == '__main__':
    r = read(sys.argv[1])
    print(len(r['names']), len(r['warmup']), len(r['draws']), r['step'])
