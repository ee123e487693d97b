"""tilelang.tools.plot_layout(layout, save_directory="./tmp", name="layout", colormap=None,
verbose=False, formats="pdf"): a picture of a host-side layout (T.Layout / T.Fragment built by
host code, tilelang.layout's bank-swizzle helpers).

The input shape is drawn as a grid (leading dimensions folded into rows).  A Fragment's cell
names the thread that holds the element and its register index (T<thread> / L<index>), coloured
by thread; a Layout's cell names the output coordinate the element maps to, coloured by that
coordinate's flat position.  SVG is written here; png and pdf go through matplotlib when it is
installed (TileLang's `tilelang[vis]` extra), else the SVG is written instead with a warning,
so a script never loses its picture.  Returns the paths written."""
import colorsys
import math
import os
import warnings

from .. import _host_layout as hl

_CELL = 44  # SVG pixels per cell


def _grid(layout):
    """(rows, cols, [(r, c, label_lines, colour_key)]) of a host layout."""
    shape = layout.get_input_shape()
    rows, cols = math.prod(shape[:-1]), shape[-1]
    cells = []
    if isinstance(layout, hl.Fragment):
        for idx, threads in layout.threads.items():
            r, c = divmod(hl.flat_index(idx, shape), cols)
            local = ",".join(str(v) for v in layout.index[idx])
            cells.append((r, c, ["T" + "/".join(str(t) for t in threads), "L" + local], threads[0]))
        keys = layout.get_thread_size()
    else:
        out_shape = layout.get_output_shape()
        for idx, out in layout.table.items():
            r, c = divmod(hl.flat_index(idx, shape), cols)
            cells.append((r, c, ["(" + ",".join(str(v) for v in out) + ")"], hl.flat_index(out, out_shape)))
        keys = math.prod(out_shape)
    return rows, cols, cells, max(keys, 1)


def _colour(key, nkeys):
    """A distinct light colour per key (hue walks the circle; 0.618 spreads neighbours)."""
    h = (key * 0.618033988749895) % 1.0 if nkeys > 12 else key / float(nkeys)
    r, g, b = colorsys.hls_to_rgb(h, 0.78, 0.55)
    return "#%02x%02x%02x" % (int(r * 255), int(g * 255), int(b * 255))


def _svg(rows, cols, cells, nkeys, title):
    w, h = cols * _CELL + 40, rows * _CELL + 60
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="monospace">' % (w, h),
           '<text x="20" y="22" font-size="14">%s</text>' % title.replace("&", "&amp;").replace("<", "&lt;")]
    for c in range(cols):
        out.append('<text x="%d" y="44" font-size="9" text-anchor="middle">%d</text>' % (20 + c * _CELL + _CELL // 2, c))
    for r, c, lines, key in sorted(cells):
        x, y = 20 + c * _CELL, 50 + r * _CELL
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#555" stroke-width="0.5"/>'
                   % (x, y, _CELL, _CELL, _colour(key, nkeys)))
        for k, text in enumerate(lines):
            out.append('<text x="%d" y="%d" font-size="9" text-anchor="middle">%s</text>'
                       % (x + _CELL // 2, y + 18 + 12 * k, text))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _matplotlib(rows, cols, cells, nkeys, title, path, fmt):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(max(3, cols * 0.6), max(3, rows * 0.6 + 0.6)))
    for r, c, lines, key in cells:
        ax.add_patch(plt.Rectangle((c, r), 1, 1, facecolor=_colour(key, nkeys), edgecolor="#555", linewidth=0.5))
        ax.text(c + 0.5, r + 0.5, "\n".join(lines), ha="center", va="center", fontsize=6)
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    ax.set_xticks([c + 0.5 for c in range(cols)], [str(c) for c in range(cols)], fontsize=5)
    ax.set_yticks([r + 0.5 for r in range(rows)], [str(r) for r in range(rows)], fontsize=5)
    fig.savefig(path, format=fmt, bbox_inches="tight")
    plt.close(fig)


def plot_layout(layout, save_directory="./tmp", name="layout", colormap=None, verbose=False, formats="pdf"):
    """Writes save_directory/name.<format> for each format ("png", "pdf", "svg", or a list or a
    comma-separated string of them).  `colormap` is accepted for TileLang's signature; the
    colours here are fixed per thread / per output position."""
    if not isinstance(layout, (hl.Layout, hl.Fragment)):
        raise TypeError("plot_layout: expected a T.Layout or T.Fragment built by host code, got %r "
                        "(a layout inside a kernel belongs to the compiler)" % (layout,))
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",") if f.strip()]
    for fmt in formats:
        if fmt not in ("png", "pdf", "svg"):
            raise ValueError("plot_layout: unknown format %r (png, pdf or svg)" % fmt)
    rows, cols, cells, nkeys = _grid(layout)
    title = "%s: %r" % (name, layout)
    os.makedirs(save_directory, exist_ok=True)
    written = []
    for fmt in formats:
        path = os.path.join(save_directory, "%s.%s" % (name, fmt))
        if fmt != "svg":
            try:
                _matplotlib(rows, cols, cells, nkeys, title, path, fmt)
                written.append(path)
                continue
            except ImportError:
                path = os.path.join(save_directory, name + ".svg")
                warnings.warn("plot_layout: matplotlib is not installed (pip install matplotlib); "
                              "wrote %s instead of %s.%s" % (path, name, fmt), stacklevel=2)
                if path in written:
                    continue
        with open(path, "w") as f:
            f.write(_svg(rows, cols, cells, nkeys, title))
        written.append(path)
    if verbose:
        for p in written:
            print("plot_layout: wrote %s" % p)
    return written
