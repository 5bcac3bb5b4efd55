function test_hand_avg()
%TEST_HAND_AVG  avgpool of a 3x3 array, 2x2 windows, 'same' padding (one cell after): PaddingValue 0 divides by
% the whole window, 'mean' by the cells of X it covers. Worked by hand.
X = [1 2 3; 4 5 6; 7 8 9];
% windows: rows 1-2/cols 1-2: 1+4+2+5 = 12; rows 1-2/col 3 (+pad): 3+6 = 9; row 3 (+pad)/cols 1-2: 7+8 = 15; 9
S = [12 9; 15 9];
check_close(poolkit.avgpool(X, 2, 'Stride', 2, 'Padding', 'same', 'DataFormat', 'SS'), S / 4, 1e-15, 'pad 0');
check_close(poolkit.avgpool(X, 2, 'Stride', 2, 'Padding', 'same', 'DataFormat', 'SS', 'PaddingValue', 'mean'), ...
            S ./ [4 2; 2 1], 1e-15, 'mean');
check_close(poolkit.avgpool(X, 2, 'Stride', 2, 'Padding', [0 0; 1 1], 'DataFormat', 'SS'), S / 4, 1e-15, '[pre;post]');
check_close(poolkit.avgpool(X, 'global', 'DataFormat', 'SS'), 5, 1e-15, 'global');
% the gradient: each cell gets dY / 4 of its window (pad 0)
dX = poolkit.avgpool_backward([1 2; 3 4], [3 3], 2, 'Stride', 2, 'Padding', 'same', 'DataFormat', 'SS');
check_close(dX, [1 1 2; 1 1 2; 3 3 4] / 4, 1e-15, 'avgpool_backward');
end
