function test_hand_6x6()
%TEST_HAND_6X6  maxpool / maxunpool / backwards on a 6x6 array worked by hand: ties (the first maximum in
% column-major order wins), NaN (wins; the last NaN in column-major order when there are two), an all -Inf window.
X = [1 2 3 3 0 -1; 4 0 3 3 NaN 5; 7 7 -2 -3 1 NaN; 7 7 -4 -5 NaN 2; 0 0 9 1 -Inf -Inf; 0 0 1 9 -Inf -Inf];
Yw = [4 3 NaN; 7 -2 NaN; 0 9 -Inf];
Iw = [2 13 26; 3 15 33; 5 17 29];      % (2,1) (1,3) (2,5); (3,1) (3,3) (3,6); (5,1) (5,3) (5,5)
Cw = uint8([1 0 1; 0 0 2; 0 0 0]);    % the same cells, 0-based column-major within each 2x2 window
Zw = zeros(6); Zw(Iw) = Yw;
for cls = {'double', 'single'}
  x = cast(X, cls{1});
  [Y, I, s] = poolkit.maxpool(x, [2 2], 'Stride', [2 2], 'DataFormat', 'SS');
  check(isa(Y, cls{1}) && isa(I, 'double'), 'classes %s / %s', class(Y), class(I));
  check_close(Y, cast(Yw, cls{1}), 0, 'Y');
  check(isequal(I, Iw), 'indx %s', mat2str(I));
  check(isequal(s, [6 6]), 'inputSize %s', mat2str(s));
  [Yc, Ic, info] = poolkit.maxpool(x, 2, 'Stride', 2, 'DataFormat', 'SS', 'Indices', 'compact');
  check_close(Yc, Y, 0, 'Y compact');
  check(isequal(Ic, Cw), 'compact indx %s', mat2str(Ic));
  Z = poolkit.maxunpool(Y, I, s);
  check_close(Z, cast(Zw, cls{1}), 0, 'maxunpool');
  check_close(poolkit.maxunpool(Yc, Ic, info), Z, 0, 'maxunpool compact');
  dY = cast(reshape(1:9, 3, 3), cls{1});
  dXw = zeros(6, cls{1}); dXw(Iw) = dY;
  check_close(poolkit.maxpool_backward(dY, I, s), dXw, 0, 'maxpool_backward');
  check_close(poolkit.maxpool_backward(dY, Ic, info), dXw, 0, 'maxpool_backward compact');
  dZ = cast(reshape(101:136, 6, 6), cls{1});
  check_close(poolkit.maxunpool_backward(dZ, I), dZ(Iw), 0, 'maxunpool_backward');
  check_close(poolkit.maxunpool_backward(dZ, Ic, info), dZ(Iw), 0, 'maxunpool_backward compact');
end
% Without indices the values are the same; with only Y requested nothing else is computed.
check_close(poolkit.maxpool(X, 2, 'Stride', 2, 'DataFormat', 'SS'), Yw, 0, 'Y alone');
end
