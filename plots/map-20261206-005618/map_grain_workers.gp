# Which policy wins, by task grain and worker count? colour = winner, shade = margin over the runner-up (full at +50% or more); ~ fragile, ? undecided
# Written by run.py plot; data in map_grain_workers.dat.  Rerun: gnuplot map_grain_workers.gp
datafile = "map_grain_workers.dat"

set terminal svg size 1240,1054 dynamic noenhanced background "#ffffff"
set output "map_grain_workers.svg"
reset
set datafile missing NaN
set tics scale 0
set style fill solid 1.0 border lc rgb "#ffffff"
unset key
set multiplot layout 4,2 title "Which policy wins, by task grain and worker count?\ncolour = winner, shade = margin over the runner-up (full at +50% or more); ~ fragile, ? undecided" font ",11"
set title "none: measured" font ",10"
set xrange [-0.5:1.5]
set yrange [-0.5:1.5]
set xtics ("10 us" 0, "100 us" 1) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 0 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 0 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "late: measured" font ",10"
set xrange [-0.5:1.5]
set yrange [-0.5:1.5]
set xtics ("10 us" 0, "100 us" 1) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 1 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 1 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "skewed: measured" font ",10"
set xrange [-0.5:0.5]
set yrange [-0.5:1.5]
set xtics ("10 us" 0) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 2 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 2 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "foreign: measured" font ",10"
set xrange [-0.5:2.5]
set yrange [-0.5:1.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 3 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 3 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "none: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("1 us" 0, "10 us" 1, "100 us" 2, "1 ms" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 4 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 4 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "late: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("1 us" 0, "10 us" 1, "100 us" 2, "1 ms" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 5 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 5 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "skewed: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("1 us" 0, "10 us" 1, "100 us" 2, "1 ms" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 6 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 6 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "foreign: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:4.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3, "1 ms" 4) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 7 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 7 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
unset multiplot
unset output

set terminal pngcairo size 1240,1054 noenhanced background "#ffffff"
set output "map_grain_workers.png"
reset
set datafile missing NaN
set tics scale 0
set style fill solid 1.0 border lc rgb "#ffffff"
unset key
set multiplot layout 4,2 title "Which policy wins, by task grain and worker count?\ncolour = winner, shade = margin over the runner-up (full at +50% or more); ~ fragile, ? undecided" font ",11"
set title "none: measured" font ",10"
set xrange [-0.5:1.5]
set yrange [-0.5:1.5]
set xtics ("10 us" 0, "100 us" 1) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 0 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 0 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "late: measured" font ",10"
set xrange [-0.5:1.5]
set yrange [-0.5:1.5]
set xtics ("10 us" 0, "100 us" 1) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 1 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 1 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "skewed: measured" font ",10"
set xrange [-0.5:0.5]
set yrange [-0.5:1.5]
set xtics ("10 us" 0) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 2 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 2 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "foreign: measured" font ",10"
set xrange [-0.5:2.5]
set yrange [-0.5:1.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 3 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 3 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "none: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("1 us" 0, "10 us" 1, "100 us" 2, "1 ms" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 4 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 4 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "late: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("1 us" 0, "10 us" 1, "100 us" 2, "1 ms" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 5 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 5 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "skewed: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("1 us" 0, "10 us" 1, "100 us" 2, "1 ms" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 6 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 6 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "foreign: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:4.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3, "1 ms" 4) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "task grain"
set ylabel "workers"
plot datafile index 7 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 7 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
unset multiplot
unset output
