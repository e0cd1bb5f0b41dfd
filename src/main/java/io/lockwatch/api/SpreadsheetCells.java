package io.lockwatch.api;

/**
 * Text cells of the registry's CSV as a spreadsheet will not run them (CSV injection, OWASP): on export a cell that
 * starts with {@code =}, {@code +}, {@code -}, {@code @}, a tab or a carriage return gets a leading {@code '}, the
 * spreadsheets' own mark for "text"; on import that mark is taken off again. A cell that already starts with the
 * mark before one of those characters, or before a second mark, gets one more, so that the two are exact inverses:
 * whatever was imported is exported as a file that imports to the same registry, and an address written by hand
 * with a leading apostrophe ({@code 'Tween Bridges}) is kept as it is.
 */
final class SpreadsheetCells {

    private static final char MARK = '\'';

    private SpreadsheetCells() {
    }

    /** The cell as written to a CSV export. */
    static String neutralised(String cell) {
        if (cell == null || cell.isEmpty()) {
            return cell;
        }
        return runs(cell.charAt(0)) || marked(cell) ? MARK + cell : cell;
    }

    /** The cell as read from a CSV import: one mark taken off where {@link #neutralised} would have put it. */
    static String restored(String cell) {
        return cell != null && marked(cell) ? cell.substring(1) : cell;
    }

    /** The mark, then a character a spreadsheet runs or a second mark. */
    private static boolean marked(String cell) {
        return cell.length() > 1 && cell.charAt(0) == MARK && (runs(cell.charAt(1)) || cell.charAt(1) == MARK);
    }

    private static boolean runs(char first) {
        return first == '=' || first == '+' || first == '-' || first == '@' || first == '\t' || first == '\r';
    }
}
