// PressPanel: a 640x480 undecorated Swing window at (0,0) showing one solid colour.
// A mouse PRESS (any button) or the space key flips it to the other colour; a release
// changes nothing. No animation, no timers, no text: between inputs no pixel changes.
//
//   Colour A: rgb(32, 96, 192)   (#2060c0, blue; shown first)
//   Colour B: rgb(224, 160, 32)  (#e0a020, amber)
//
// Run (single-file source launch, JDK 11+), against an X display such as Xvnc :N:
//   DISPLAY=:N _AWT_MAX_POLL_TIMEOUT=10 java PressPanel.java
// Without _AWT_MAX_POLL_TIMEOUT=10 the JDK's X toolkit may flush paints to the X server
// only every 250-500 ms; a flip also calls Toolkit.sync() (XSync) for the same reason.
// Prints "PressPanel mapped" once the window is shown and "PressPanel painted" after the
// first paint, on stdout. With PRESS_PANEL_LOG=1 it logs every flip on stderr.
// With PRESS_GC_EVERY=N (N > 0) every Nth flip first runs System.gc() on the event thread
// over about 64 MB of live objects kept for it: a real stop-the-world pause before that
// press's answer is painted, which a GC log with wall time shows (novnc.sh writes one).

import java.awt.Color;
import java.awt.Graphics;
import java.awt.Toolkit;
import java.awt.event.KeyAdapter;
import java.awt.event.KeyEvent;
import java.awt.event.MouseAdapter;
import java.awt.event.MouseEvent;
import java.awt.event.WindowAdapter;
import java.awt.event.WindowEvent;
import javax.swing.JFrame;
import javax.swing.JPanel;
import javax.swing.SwingUtilities;

public class PressPanel {
    static final Color A = new Color(32, 96, 192);
    static final Color B = new Color(224, 160, 32);
    static final boolean LOG = "1".equals(System.getenv("PRESS_PANEL_LOG"));
    static final int GC_EVERY = gcEvery();
    // Live objects for a full collection to mark and move: many small arrays, not one big
    // one, so the pause is the collector's work (tens of ms), not a single copy.
    static final byte[][] LIVE = new byte[GC_EVERY > 0 ? 256 * 1024 : 0][];

    static int gcEvery() {
        try {
            return Math.max(0, Integer.parseInt(System.getenv().getOrDefault("PRESS_GC_EVERY", "0")));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    static final class Panel extends JPanel {
        private boolean flipped = false;
        private boolean painted = false;
        private long flips = 0;

        Panel() {
            setOpaque(true);
            setDoubleBuffered(true);
            setFocusable(true);
            addMouseListener(new MouseAdapter() {
                @Override public void mousePressed(MouseEvent e) { flip("press b" + e.getButton()); }
                // mouseReleased / mouseClicked: deliberately nothing.
            });
            addKeyListener(new KeyAdapter() {
                @Override public void keyPressed(KeyEvent e) {
                    if (e.getKeyCode() == KeyEvent.VK_SPACE) flip("space");
                }
            });
        }

        void flip(String why) {
            flipped = !flipped;
            flips++;
            if (GC_EVERY > 0 && flips % GC_EVERY == 0) {
                System.gc();
                if (LOG) System.err.println("gc before flip " + flips);
            }
            if (LOG) System.err.println("flip " + flips + " " + why + " -> " + (flipped ? "B" : "A"));
            // Paint now on the EDT rather than coalescing through the RepaintManager.
            paintImmediately(0, 0, getWidth(), getHeight());
            // Push the blit to the X server now (XSync), not at the toolkit's next poll.
            Toolkit.getDefaultToolkit().sync();
        }

        @Override protected void paintComponent(Graphics g) {
            g.setColor(flipped ? B : A);
            g.fillRect(0, 0, getWidth(), getHeight());
            if (!painted) {
                painted = true;
                System.out.println("PressPanel painted");
                System.out.flush();
            }
        }
    }

    public static void main(String[] args) {
        for (int i = 0; i < LIVE.length; i++) LIVE[i] = new byte[256];
        SwingUtilities.invokeLater(() -> {
            JFrame f = new JFrame("PressPanel");
            f.setUndecorated(true);
            f.setDefaultCloseOperation(JFrame.EXIT_ON_CLOSE);
            f.setResizable(false);
            Panel p = new Panel();
            f.setContentPane(p);
            f.setBounds(0, 0, 640, 480);
            f.addWindowListener(new WindowAdapter() {
                @Override public void windowOpened(WindowEvent e) {
                    p.requestFocusInWindow();
                    System.out.println("PressPanel mapped");
                    System.out.flush();
                }
            });
            f.setVisible(true);
            f.toFront();
            p.requestFocusInWindow();
        });
    }
}
