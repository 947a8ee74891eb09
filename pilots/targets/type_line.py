#!/usr/bin/python3
"""type_line.py: a 640x480 undecorated GTK 3 window at (0,0) with one line of typed text.

Each printable key typed draws its character in the next 14 px cell of a line at
y 200-240: cell k spans x 20 + 14 k to 34 + 14 k (40 cells, x 20-580), in a 20 px
monospace face, light on dark. The 41st key starts the line again. Nothing else ever
changes: no caret, no animation, no timers, so between keys no pixel changes and a
key's glyph is the only change in its cell. Enter clears the line.

  background rgb(24, 27, 33), glyphs rgb(240, 240, 240)

Runs under X11 (DISPLAY, e.g. TigerVNC's Xvnc) or GTK Broadway (GDK_BACKEND=broadway
BROADWAY_DISPLAY=:N). Prints "type_line mapped", "type_line placed at 0,0" and
"type_line painted" on stdout as press_panel.py does; with TYPE_LINE_LOG=1 it logs every
key on stderr. (Debian: python3-gi python3-gi-cairo gir1.2-gtk-3.0.)
"""

import os
import signal
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

BG = (24 / 255, 27 / 255, 33 / 255)
FG = (240 / 255, 240 / 255, 240 / 255)
X0, CELL, CELLS, Y0, Y1 = 20, 14, 40, 200, 240
LOG = os.environ.get("TYPE_LINE_LOG") == "1"


class TypeLine:
    def __init__(self):
        self.text = ""
        self.painted = False
        self.placed = False
        self.presented = False

        win = Gtk.Window(title="type_line")
        win.set_decorated(False)
        win.set_resizable(False)
        win.set_default_size(640, 480)
        win.set_size_request(640, 480)
        win.move(0, 0)
        win.connect("destroy", Gtk.main_quit)
        win.connect("map-event", self.on_map)
        win.connect("configure-event", self.on_configure)
        win.connect("key-press-event", self.on_key)

        area = Gtk.DrawingArea()
        area.set_size_request(640, 480)
        area.set_can_focus(True)
        area.add_events(Gdk.EventMask.BUTTON_PRESS_MASK)
        area.connect("draw", self.on_draw)
        area.connect("button-press-event", lambda *_: True)
        win.add(area)

        self.win = win
        self.area = area
        win.show_all()
        area.grab_focus()

    def on_key(self, _widget, event):
        if event.keyval in (Gdk.KEY_Return, Gdk.KEY_KP_Enter):
            # A fresh line: every run types into blank cells, whatever ran before.
            self.text = ""
            self.area.queue_draw_area(X0, Y0, CELL * CELLS, Y1 - Y0)
            return True
        ch = chr(Gdk.keyval_to_unicode(event.keyval) or 0)
        if not ch.isprintable() or ch.isspace() or ch == "\0":
            return False
        if len(self.text) == CELLS:
            self.text = ""
            self.area.queue_draw_area(X0, Y0, CELL * CELLS, Y1 - Y0)
        self.text += ch
        k = len(self.text) - 1
        if LOG:
            print(f"key {k} {ch!r}", file=sys.stderr, flush=True)
        # Only the new glyph's cell is redrawn: the update streamed is that cell.
        self.area.queue_draw_area(X0 + CELL * k, Y0, CELL, Y1 - Y0)
        return True

    def on_draw(self, _widget, cr):
        cr.set_source_rgb(*BG)
        cr.paint()
        cr.set_source_rgb(*FG)
        cr.select_font_face("monospace")
        cr.set_font_size(20)
        for k, ch in enumerate(self.text):
            cr.move_to(X0 + CELL * k + 1, Y1 - 12)
            cr.show_text(ch)
        if not self.painted:
            self.painted = True
            print("type_line painted", flush=True)
        return True

    def on_map(self, _widget, _event):
        print("type_line mapped", flush=True)
        # As press_panel.py: Broadway maps a toplevel at (100, 100), and keys reach GTK
        # only once the window has focus.
        if not self.presented:
            self.presented = True
            self.win.present()
        x, y = self.win.get_position()
        if (x, y) != (0, 0):
            self.win.move(0, 0)
        else:
            self.report_placed(x, y)
        return False

    def on_configure(self, _widget, event):
        if event.x == 0 and event.y == 0:
            self.report_placed(event.x, event.y)
        return False

    def report_placed(self, x, y):
        if not self.placed:
            self.placed = True
            print(f"type_line placed at {x},{y}", flush=True)


def main():
    if not Gtk.init_check(sys.argv)[0]:
        print("type_line: cannot open a GDK display (GDK_BACKEND / BROADWAY_DISPLAY / DISPLAY?)",
              file=sys.stderr)
        return 1
    TypeLine()
    for sig in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_HIGH, sig, lambda *_: (Gtk.main_quit(), False)[1])
    Gtk.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
