#!/usr/bin/python3
"""press_panel.py: a 640x480 undecorated GTK 3 window at (0,0) showing one solid colour.

A mouse button PRESS or the space key flips it to the other colour; a release changes
nothing. No animation, no timers, no text: between inputs no pixel changes.

  Colour A: rgb(32, 96, 192)   (#2060c0, blue; shown first)
  Colour B: rgb(224, 160, 32)  (#e0a020, amber)

The same two colours as PressPanel.java. Run under GTK Broadway:

  broadwayd --address 127.0.0.1 --port P :N &
  GDK_BACKEND=broadway BROADWAY_DISPLAY=:N /usr/bin/python3 press_panel.py

(Debian: python3-gi python3-gi-cairo gir1.2-gtk-3.0; use the system python3, which has gi.)
Prints "press_panel mapped" on the window's map-event, "press_panel placed at 0,0" once it
sits at the origin (Broadway maps new toplevels at (100, 100); the app moves it after the
map) and "press_panel painted" after its first draw, on stdout. With PRESS_PANEL_LOG=1 it logs every flip on stderr.
"""

import os
import signal
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

A = (32 / 255, 96 / 255, 192 / 255)
B = (224 / 255, 160 / 255, 32 / 255)
LOG = os.environ.get("PRESS_PANEL_LOG") == "1"


class PressPanel:
    def __init__(self):
        self.flipped = False
        self.flips = 0
        self.painted = False
        self.placed = False
        self.presented = False

        win = Gtk.Window(title="press_panel")
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
        # Button presses only: no BUTTON_RELEASE handler does anything (the mask carries
        # release too so GTK's implicit grab ends cleanly; the handler ignores it).
        area.add_events(Gdk.EventMask.BUTTON_PRESS_MASK | Gdk.EventMask.BUTTON_RELEASE_MASK)
        area.connect("draw", self.on_draw)
        area.connect("button-press-event", self.on_press)
        win.add(area)

        self.win = win
        self.area = area
        win.show_all()
        area.grab_focus()

    def flip(self, why):
        self.flipped = not self.flipped
        self.flips += 1
        if LOG:
            print(f"flip {self.flips} {why} -> {'B' if self.flipped else 'A'}", file=sys.stderr, flush=True)
        self.area.queue_draw()

    def on_press(self, _widget, event):
        # GDK_2BUTTON_PRESS / 3BUTTON_PRESS follow a fast second press: one flip per press.
        if event.type == Gdk.EventType.BUTTON_PRESS:
            self.flip(f"press b{event.button}")
        return True

    def on_key(self, _widget, event):
        if event.keyval == Gdk.KEY_space:
            self.flip("space")
            return True
        return False

    def on_draw(self, _widget, cr):
        cr.set_source_rgb(*(B if self.flipped else A))
        cr.paint()
        if not self.painted:
            self.painted = True
            print("press_panel painted", flush=True)
        return True

    def on_map(self, _widget, _event):
        print("press_panel mapped", flush=True)
        # Broadway places a new toplevel at (100, 100) whatever was asked before it was shown;
        # a move after mapping sticks.
        # Keyboard focus: without it, key events reach GTK only after a first click. Once:
        # under Broadway, present() maps the window again.
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
            print(f"press_panel placed at {x},{y}", flush=True)


def main():
    if not Gtk.init_check(sys.argv)[0]:
        print("press_panel: cannot open a GDK display (GDK_BACKEND / BROADWAY_DISPLAY / DISPLAY?)",
              file=sys.stderr)
        return 1
    PressPanel()
    for sig in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_HIGH, sig, lambda *_: (Gtk.main_quit(), False)[1])
    Gtk.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
