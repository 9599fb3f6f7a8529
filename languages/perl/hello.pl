# Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
use strict;
use warnings;

$| = 1;
print STDERR "hello from perl\n";
while (my $line = <STDIN>) {
    $line =~ s/[\r\n]+$//;
    print "0 0 0 0\n" if $line eq "M";
}
