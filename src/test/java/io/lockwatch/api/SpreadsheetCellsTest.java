package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The export's mark and the import's unmarking, over every short cell of the characters that matter. */
class SpreadsheetCellsTest {

    private static final String ALPHABET = "=+-@\t\r'a ";

    @Test
    void theImportUndoesTheExportAndNoExportedCellStartsWithWhatASpreadsheetRuns() {
        List<String> cells = cells(4);
        assertThat(cells).hasSize(1 + 9 + 81 + 729 + 6561);
        for (String cell : cells) {
            String exported = SpreadsheetCells.neutralised(cell);
            assertThat(SpreadsheetCells.restored(exported)).as("round trip of [%s]", cell).isEqualTo(cell);
            if (!exported.isEmpty()) {
                assertThat("=+-@\t\r").as("first character of [%s]", exported).doesNotContain(exported.substring(0, 1));
            }
        }
    }

    @Test
    void aCellWithoutAMarkIsImportedAsItIs() {
        assertThat(SpreadsheetCells.restored("'Tween Bridges")).isEqualTo("'Tween Bridges");
        assertThat(SpreadsheetCells.restored("'")).isEqualTo("'");
        assertThat(SpreadsheetCells.restored("'=1+1")).isEqualTo("=1+1");
        assertThat(SpreadsheetCells.neutralised("Cellar")).isEqualTo("Cellar");
        assertThat(SpreadsheetCells.neutralised(null)).isNull();
    }

    private static List<String> cells(int maxLength) {
        List<String> out = new ArrayList<>(List.of(""));
        List<String> last = List.of("");
        for (int n = 1; n <= maxLength; n++) {
            List<String> next = new ArrayList<>();
            for (String prefix : last) {
                for (char c : ALPHABET.toCharArray()) {
                    next.add(prefix + c);
                }
            }
            out.addAll(next);
            last = next;
        }
        return out;
    }
}
