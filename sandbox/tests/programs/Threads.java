// Positive control: a multi-threaded JVM program under the hostile suite's limits.
import java.util.concurrent.*;
import java.util.*;

public class Threads {
    public static void main(String[] args) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<Long>> parts = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            final int id = t;
            parts.add(pool.submit(() -> {
                long sum = 0;
                List<int[]> garbage = new ArrayList<>();
                for (int i = 0; i < 2_000_000; i++) {
                    sum += (i ^ id) % 7;
                    if (i % 1000 == 0) garbage.add(new int[64]);
                }
                return sum + garbage.size();
            }));
        }
        long total = 0;
        for (Future<Long> f : parts) total += f.get();
        pool.shutdown();
        System.out.println("java threads ok " + total);
    }
}
