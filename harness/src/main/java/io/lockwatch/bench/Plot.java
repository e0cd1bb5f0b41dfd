package io.lockwatch.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import javax.imageio.ImageIO;

/**
 * A plain PNG of a run, drawn with Java2D (headless): throughput per second in the upper panel, notification
 * latency per second in the lower one, on a shared time axis in seconds.
 */
final class Plot {

    /** One line: a name, a colour, and (t, value) points. */
    record Series(String name, Color color, List<double[]> points) {
    }

    private static final int WIDTH = 1200, PANEL = 300, MARGIN_LEFT = 90, MARGIN_RIGHT = 30, TOP = 40, GAP = 60;

    private Plot() {
    }

    static void write(Path file, String title, String upperUnit, List<Series> upper, String lowerUnit,
                      List<Series> lower, double[] shadeFromTo) throws IOException {
        int height = TOP + PANEL + GAP + PANEL + 50;
        BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, height);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.drawString(title, MARGIN_LEFT, 24);
        double tMax = 1;
        for (Series s : concat(upper, lower)) {
            for (double[] p : s.points()) {
                tMax = Math.max(tMax, p[0]);
            }
        }
        panel(g, TOP, upperUnit, upper, tMax, shadeFromTo);
        panel(g, TOP + PANEL + GAP, lowerUnit, lower, tMax, shadeFromTo);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.setColor(Color.BLACK);
        g.drawString("seconds since the timed run started (shaded: publishing, after the warm-up)", MARGIN_LEFT, height - 12);
        g.dispose();
        ImageIO.write(image, "png", file.toFile());
    }

    private static List<Series> concat(List<Series> a, List<Series> b) {
        List<Series> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static void panel(Graphics2D g, int top, String unit, List<Series> series, double tMax, double[] shade) {
        int left = MARGIN_LEFT, right = WIDTH - MARGIN_RIGHT, bottom = top + PANEL;
        double vMax = 1;
        for (Series s : series) {
            for (double[] p : s.points()) {
                if (Double.isFinite(p[1])) {
                    vMax = Math.max(vMax, p[1]);
                }
            }
        }
        vMax = niceCeiling(vMax);
        if (shade != null) {
            g.setColor(new Color(235, 242, 250));
            int x0 = x(shade[0], tMax, left, right), x1 = x(shade[1], tMax, left, right);
            g.fillRect(x0, top, Math.max(1, x1 - x0), PANEL);
        }
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        for (int i = 0; i <= 5; i++) {
            int y = bottom - i * PANEL / 5;
            g.setColor(new Color(225, 225, 225));
            g.drawLine(left, y, right, y);
            g.setColor(Color.DARK_GRAY);
            g.drawString(String.format(Locale.US, "%,.0f", vMax * i / 5), 8, y + 4);
        }
        for (int i = 0; i <= 10; i++) {
            int x = left + i * (right - left) / 10;
            g.setColor(Color.DARK_GRAY);
            g.drawString(String.format(Locale.US, "%.0f", tMax * i / 10), x - 8, bottom + 16);
        }
        g.setColor(Color.BLACK);
        g.drawRect(left, top, right - left, PANEL);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.drawString(unit, left + 6, top + 16);
        int legend = left + 6 + g.getFontMetrics().stringWidth(unit) + 30;
        g.setStroke(new BasicStroke(1.8f));
        for (Series s : series) {
            g.setColor(s.color());
            g.drawLine(legend, top + 12, legend + 20, top + 12);
            g.drawString(s.name(), legend + 24, top + 16);
            legend += 24 + g.getFontMetrics().stringWidth(s.name()) + 24;
            int[] last = null;
            for (double[] p : s.points()) {
                if (!Double.isFinite(p[1])) {
                    last = null;
                    continue;
                }
                int[] now = {x(p[0], tMax, left, right), bottom - (int) Math.round(Math.min(p[1], vMax) / vMax * PANEL)};
                if (last != null) {
                    g.drawLine(last[0], last[1], now[0], now[1]);
                }
                last = now;
            }
        }
        g.setStroke(new BasicStroke(1f));
    }

    private static int x(double t, double tMax, int left, int right) {
        return left + (int) Math.round(t / tMax * (right - left));
    }

    private static double niceCeiling(double v) {
        double magnitude = Math.pow(10, Math.floor(Math.log10(v)));
        for (double step : new double[] {1, 2, 2.5, 5, 10}) {
            if (step * magnitude >= v) {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }
}
